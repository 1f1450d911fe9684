//===- Report.cpp - attnc-tune's final report -----------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Report.h"

#include "attnc/Target/Registry.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace attnc;
using namespace attnc::tune;

std::string attnc::tune::reproduceCommand(const TuningEntry &e, llvm::StringRef spec,
                                          llvm::StringRef db) {
  const TuningCandidate *best = e.best();
  std::string explicitForm =
      best ? llvm::formatv("attnc {0} --target={1} --backend={2} --schedule={3} -o kernel.o",
                           spec, e.key.target, best->backend, best->schedule)
                 .str()
           : llvm::formatv("attnc {0} --target={1} -o kernel.o", spec, e.key.target).str();
  return explicitForm + "\n  or: " +
         llvm::formatv("attnc {0} --target={1} --tuning-db={2} -o kernel.o", spec,
                       e.key.target, db)
             .str();
}

void attnc::tune::printSummary(const TuningEntry &e, const SearchCounts &c,
                               llvm::StringRef spec, llvm::StringRef db, llvm::raw_ostream &os) {
  std::map<std::string, unsigned> byStatus;
  for (const TuningCandidate &x : e.candidates)
    ++byStatus[x.status];
  os << llvm::formatv("@{0} on {1} ({2}, {3}), {4}\n", e.key.kernel, e.key.target, e.key.cpu,
                      e.key.shape, e.measured);
  os << llvm::formatv("search: {0}; {1} candidates tried in {2:f0} s, {3} more from the DB;",
                      c.search, c.tried, c.seconds, c.fromDb);
  for (auto &[status, n] : byStatus)
    os << " " << status << " " << n;
  unsigned pruned = 0;
  std::string reasons;
  for (auto &r : c.pruned) {
    pruned += r.second;
    reasons += (reasons.empty() ? "" : ", ") + r.first().str() + " " + std::to_string(r.second);
  }
  os << llvm::formatv("; {0} compiled to a kernel already measured (not re-timed); pruned "
                      "before compiling {1}{2}\n",
                      c.sameObject, pruned, reasons.empty() ? "" : " (" + reasons + ")");
  if (const TuningCandidate *b = e.best())
    os << llvm::formatv("best: {0} backend, {1}: median {2:f3} ms against the default's "
                        "{3:f3} ms, {4:f3}x (median of {5} interleaved rounds)\n",
                        b->backend, b->schedule, b->medianMs, b->defaultMs, b->speedup,
                        b->rounds);
  else
    os << llvm::formatv("best: the default schedule (median {0:f3} ms); no correct candidate "
                        "beat it\n",
                        e.defaultMs());
  os << "reproduce: " << reproduceCommand(e, spec, db) << "\n";
}

/// Each tunable's printed value in a "name=value,..." schedule.
static std::map<std::string, std::string> parseSchedule(llvm::StringRef schedule) {
  std::map<std::string, std::string> values;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::SplitString(schedule, parts, ",");
  for (llvm::StringRef part : parts) {
    auto [name, value] = part.split('=');
    values[name.str()] = value.str();
  }
  return values;
}

/// One panel per (backend, tunable): speedup over the default against the
/// tunable's values; the dashed line is the default (1x).
/// A backend's dots: one color per backend, in --backend's order.
static const char *backendColor(llvm::StringRef backend) {
  static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  size_t i = llvm::find(backendNames(), backend) - backendNames().begin();
  return colors[i % std::size(colors)];
}

static void writeSvg(const TuningEntry &e, const SearchSpace &space, llvm::raw_ostream &os) {
  std::vector<SearchSpace::Dimension> dims = space.dimensions();
  const int panelW = 260, panelH = 180, cols = 3, pad = 40;
  int rows = (dims.size() + cols - 1) / cols;
  double top = 1.1;
  for (const TuningCandidate &c : e.candidates)
    if (c.ok())
      top = std::max(top, c.speedup * 1.05);
  os << llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' height='{1}' "
                      "font-family='sans-serif' font-size='10'>\n",
                      cols * panelW, rows * panelH + 20);
  os << llvm::formatv("<text x='4' y='12'>@{0}: speedup over the default schedule per "
                      "tunable (correct candidates; dashed: 1x)</text>\n",
                      e.key.kernel);
  for (auto [i, d] : llvm::enumerate(dims)) {
    int x0 = (i % cols) * panelW + pad, y0 = (i / cols) * panelH + 30;
    int w = panelW - pad - 10, h = panelH - 50;
    auto y = [&](double s) { return y0 + h - h * s / top; };
    os << llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' fill='none' "
                        "stroke='#888'/>\n<text x='{0}' y='{4}'>{5}: {6}</text>\n",
                        x0, y0, w, h, y0 - 4, d.backend, d.name);
    os << llvm::formatv("<line x1='{0}' x2='{1}' y1='{2:f1}' y2='{2:f1}' stroke='#444' "
                        "stroke-dasharray='4 3'/>\n",
                        x0, x0 + w, y(1.0));
    os << llvm::formatv("<text x='{0}' y='{1:f1}' text-anchor='end'>{2:f2}</text>\n", x0 - 3,
                        y(top) + 8, top);
    size_t n = d.labels.size();
    for (auto [k, label] : llvm::enumerate(d.labels))
      os << llvm::formatv("<text x='{0:f1}' y='{1}' text-anchor='middle'>{2}</text>\n",
                          x0 + w * (k + 0.5) / n, y0 + h + 12, label);
    for (const TuningCandidate &c : e.candidates) {
      if (!c.ok() || c.backend != d.backend)
        continue;
      auto values = parseSchedule(c.schedule);
      auto it = llvm::find(d.labels, values[d.name]);
      if (it == d.labels.end())
        continue;
      os << llvm::formatv("<circle cx='{0:f1}' cy='{1:f1}' r='3' fill='{2}' "
                          "fill-opacity='0.6'/>\n",
                          x0 + w * ((it - d.labels.begin()) + 0.5) / n, y(c.speedup),
                          backendColor(c.backend));
    }
  }
  os << "</svg>\n";
}

static void writeTable(const TuningEntry &e, llvm::raw_ostream &os) {
  std::vector<const TuningCandidate *> order;
  for (const TuningCandidate &c : e.candidates)
    order.push_back(&c);
  // Correct ones fastest first, then the rejected ones; ties in the DB's order
  // (the pointers', into one vector). A plain sort with that tie-break, not
  // stable_sort: libstdc++ 12's stable_sort uses the deprecated
  // get_temporary_buffer and warns.
  llvm::sort(order, [](auto *a, auto *b) {
    return std::make_tuple(!a->ok(), -a->speedup, a) < std::make_tuple(!b->ok(), -b->speedup, b);
  });
  os << "| backend | schedule | status | median ms | spread | default ms | speedup |\n"
        "|---|---|---|---|---|---|---|\n";
  for (const TuningCandidate *c : order) {
    if (c->ok())
      os << llvm::formatv("| {0} | {1} | ok | {2:f3} | {3:f1}% | {4:f3} | {5:f3}x |\n",
                          c->backend, c->schedule, c->medianMs, c->spreadPct, c->defaultMs,
                          c->speedup);
    else
      os << llvm::formatv("| {0} | {1} | {2}: {3} | | | | |\n", c->backend, c->schedule,
                          c->status, c->detail);
  }
}

llvm::Error attnc::tune::writeReport(const TuningEntry &e, const SearchCounts &c,
                                     const SearchSpace &space, llvm::StringRef spec,
                                     llvm::StringRef db, llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create " + dir);
  auto write = [&](llvm::StringRef name, auto fn) -> llvm::Error {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write " + path);
    fn(os);
    return llvm::Error::success();
  };
  if (llvm::Error err = write("candidates.svg", [&](auto &os) { writeSvg(e, space, os); }))
    return err;
  return write("report.md", [&](auto &os) {
    os << "# attnc-tune report\n\n```\n";
    printSummary(e, c, spec, db, os);
    os << "```\n\nSpeedup: the default schedule's time over the candidate's, median of the "
          "rounds in which both ran back to back. Spread: (slowest - fastest) / median of the "
          "candidate's rounds.\n\n![speedup per tunable](candidates.svg)\n\n";
    writeTable(e, os);
  });
}
