//===- WeightsSvg.cpp - attention weights as SVG heat maps ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Plain SVG 1.1, no dependencies: a grid of panels (four per row), each a
// rect per (query, key) cell, axis ticks at round token indices, and one
// colour bar. Colours follow viridis (perceptually uniform, legible in grey).
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/WeightsSvg.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cmath>

using namespace attnc;

namespace {

constexpr int kPanelsPerRow = 4;
constexpr int kMargin = 48, kTitleHeight = 40, kGap = 56, kBarWidth = 16;

/// Viridis sampled at nine evenly spaced points.
constexpr std::array<std::array<int, 3>, 9> kViridis = {{{68, 1, 84},
                                                         {71, 44, 122},
                                                         {59, 81, 139},
                                                         {44, 113, 142},
                                                         {33, 144, 141},
                                                         {39, 173, 129},
                                                         {92, 200, 99},
                                                         {170, 220, 50},
                                                         {253, 231, 37}}};

std::string colour(double t) {
  t = std::clamp(t, 0.0, 1.0) * (kViridis.size() - 1);
  size_t lo = std::min<size_t>(t, kViridis.size() - 2);
  double f = t - lo;
  std::array<int, 3> c;
  for (int i = 0; i < 3; ++i)
    c[i] = std::lround(kViridis[lo][i] * (1 - f) + kViridis[lo + 1][i] * f);
  return llvm::formatv("#{0:x-2}{1:x-2}{2:x-2}", c[0], c[1], c[2]).str();
}

/// A round tick spacing giving about five ticks over `extent` tokens.
int64_t tickStep(int64_t extent) {
  int64_t step = 1;
  while (extent / step > 5)
    step *= (std::to_string(step)[0] == '2') ? 5 : 2; // 1, 2, 10, 20, 100, ...
  return step;
}

struct Geometry {
  int64_t seqQ, seqKv;
  double cell;
  double panelW, panelH;
  double x(int head) const { return kMargin + (head % kPanelsPerRow) * (panelW + kGap); }
  double y(int head) const {
    return kTitleHeight + kMargin / 2 + (head / kPanelsPerRow) * (panelH + kGap);
  }
};

void drawPanel(llvm::raw_ostream &os, const HostTensor &weights, int head,
               double maxWeight, const Geometry &g) {
  double x0 = g.x(head), y0 = g.y(head);
  os << llvm::formatv("<text x='{0}' y='{1}' class='t'>head {2}</text>\n", x0,
                      y0 - 6, head);
  const double *w = &weights.data[head * g.seqQ * g.seqKv];
  for (int64_t i = 0; i < g.seqQ; ++i)
    for (int64_t j = 0; j < g.seqKv; ++j) {
      double v = w[i * g.seqKv + j];
      os << llvm::formatv("<rect x='{0:f2}' y='{1:f2}' width='{2:f2}' "
                          "height='{2:f2}' fill='{3}'/>\n",
                          x0 + j * g.cell, y0 + i * g.cell, g.cell,
                          v == 0 ? std::string("#d9d9d9") : colour(v / maxWeight));
    }
  for (int64_t j = 0; j < g.seqKv; j += tickStep(g.seqKv))
    os << llvm::formatv("<text x='{0:f1}' y='{1:f1}' class='x'>{2}</text>\n",
                        x0 + (j + 0.5) * g.cell, y0 + g.panelH + 14, j);
  for (int64_t i = 0; i < g.seqQ; i += tickStep(g.seqQ))
    os << llvm::formatv("<text x='{0:f1}' y='{1:f1}' class='y'>{2}</text>\n",
                        x0 - 6, y0 + (i + 0.5) * g.cell + 4, i);
  os << llvm::formatv("<text x='{0:f1}' y='{1:f1}' class='x'>key index</text>\n",
                      x0 + g.panelW / 2, y0 + g.panelH + 30);
  os << llvm::formatv("<text transform='translate({0:f1},{1:f1}) rotate(-90)' "
                      "class='x'>query index</text>\n",
                      x0 - 30, y0 + g.panelH / 2);
}

void drawColourBar(llvm::raw_ostream &os, double x, double y, double height,
                   double maxWeight) {
  constexpr int kSteps = 64;
  for (int s = 0; s < kSteps; ++s)
    os << llvm::formatv("<rect x='{0}' y='{1:f2}' width='{2}' height='{3:f2}' "
                        "fill='{4}'/>\n",
                        x, y + height * (kSteps - 1 - s) / kSteps, kBarWidth,
                        height / kSteps + 0.5, colour((s + 0.5) / kSteps));
  for (double t : {0.0, 0.5, 1.0})
    os << llvm::formatv("<text x='{0}' y='{1:f1}' class='y' "
                        "style='text-anchor:start'>{2:g}</text>\n",
                        x + kBarWidth + 4, y + height * (1 - t) + 4,
                        t * maxWeight);
  os << llvm::formatv("<rect x='{0}' y='{1:f1}' width='{2}' height='{2}' "
                      "fill='#d9d9d9'/><text x='{3}' y='{4:f1}' class='y' "
                      "style='text-anchor:start'>masked</text>\n",
                      x, y + height + 12, kBarWidth, x + kBarWidth + 4,
                      y + height + 24);
}

} // namespace

void attnc::writeWeightsSvg(const HostTensor &weights, llvm::StringRef title,
                            llvm::raw_ostream &os) {
  int heads = weights.shape[1];
  Geometry g{weights.shape[2], weights.shape[3], 0, 0, 0};
  g.cell = std::clamp(320.0 / std::max(g.seqQ, g.seqKv), 1.0, 16.0);
  g.panelW = g.seqKv * g.cell;
  g.panelH = g.seqQ * g.cell;
  int64_t perHead = g.seqQ * g.seqKv;
  double maxWeight = *std::max_element(weights.data.begin(),
                                       weights.data.begin() + heads * perHead);
  if (maxWeight <= 0)
    maxWeight = 1;

  int cols = std::min(heads, kPanelsPerRow);
  int rows = (heads + kPanelsPerRow - 1) / kPanelsPerRow;
  double barX = g.x(cols - 1) + g.panelW + kGap / 2;
  double width = barX + kBarWidth + 72;
  double height = g.y(rows * kPanelsPerRow) - kGap + kMargin;
  os << llvm::formatv(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{0:f0}' height='{1:f0}' "
      "font-family='sans-serif' font-size='11'>\n"
      "<style>.t{{font-size:13px;font-weight:bold}} .x{{text-anchor:middle}} "
      ".y{{text-anchor:end}}</style>\n"
      "<rect width='100%' height='100%' fill='white'/>\n"
      "<text x='{2}' y='22' class='t'>",
      width, height, kMargin);
  for (char c : title) // The title may hold mask syntax: escape XML.
    os << (c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c));
  os << "</text>\n";
  for (int h = 0; h < heads; ++h)
    drawPanel(os, weights, h, maxWeight, g);
  drawColourBar(os, barX, g.y(0), std::min(g.panelH, 240.0), maxWeight);
  os << "</svg>\n";
}
