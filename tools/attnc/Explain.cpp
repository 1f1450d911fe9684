//===- Explain.cpp - attnc explain: tile map, FLOPs, schedule -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Counts tiles with the same TileClassifier rules the kernel is compiled
// from, so "visited = full + partial" here is what the kernel does (tested
// with an instrumented build). The mask does not depend on batch or head, so
// one (batch, head) is classified and multiplied out.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "attnc/Conversion/AttnToNVGPU/FlashMmaKernel.h"
#include "attnc/Target/Backend.h"
#include "attnc/Target/Registry.h"
#include "attnc/Transforms/MaskModIntervals.h"
#include "attnc/Transforms/TileClassifier.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct TileMap {
  int64_t qTiles = 0, kvTiles = 0;
  std::vector<TileClass> classes; // row-major [qTiles][kvTiles]
  int64_t full = 0, partial = 0, empty = 0;
  int64_t visitedPairs = 0; // (q, kv) positions inside visited tiles
  // Tiles the mask attribute keeps whose mask_mod the interval analysis
  // decides for every batch and head: keeps nothing, keeps every pair.
  int64_t modNever = 0, modAlways = 0;
  bool kernelsDecide = false; // the kernels classify tiles by the mask_mod
  bool classifying = false;   // the backend's kernels can (Backend::classifiesMaskModTiles)
  /// The inputs the mask_mod reads, and whether --input gave them all (their
  /// values then decide its tiles here as in the kernels).
  std::string reads;
  bool inputsGiven = false;
};

/// What `inputs` hold over a box of indices, for the interval analysis.
attnc::LoadValuesFn valuesOf(const attnc::ModInputs &inputs) {
  return [&inputs](StringRef name,
                   ArrayRef<attnc::IndexRange> box) -> std::optional<attnc::IndexRange> {
    const attnc::HostTensor &t = inputs.find(name)->second;
    for (auto [n, r] : llvm::enumerate(box))
      if (r.lo < 0 || r.hi >= t.shape[n])
        return std::nullopt;
    std::vector<int64_t> at(box.size());
    for (size_t n = 0; n < box.size(); ++n)
      at[n] = box[n].lo;
    attnc::IndexRange values{INT64_MAX, INT64_MIN};
    for (;;) { // every index of the box, the last dim fastest
      int64_t flat = 0;
      for (size_t n = 0; n < at.size(); ++n)
        flat = flat * t.shape[n] + at[n];
      values.lo = std::min(values.lo, int64_t(t.data[flat]));
      values.hi = std::max(values.hi, int64_t(t.data[flat]));
      size_t n = at.size();
      while (n > 0 && at[n - 1] == box[n - 1].hi)
        at[n - 1] = box[n - 1].lo, --n;
      if (n == 0)
        return values;
      ++at[n - 1];
    }
  };
}

/// The inputs `maskMod` reads, comma-separated ("" for none).
std::string inputsRead(Region &maskMod) {
  std::string names;
  maskMod.walk([&](LoadOp load) {
    if (!llvm::StringRef(names).contains(load.getInput()))
      names += (names.empty() ? "" : ", ") + load.getInput().str();
  });
  return names;
}

/// explain classifies tiles one by one (and counts kept pairs on a 64 x 64
/// grid): past this many it would take minutes, and storing them for a
/// picture, gigabytes.
constexpr int64_t kMaxCountedTiles = int64_t(1) << 26, kMaxDrawnTiles = int64_t(1) << 18;

/// ceil(length / block) for positive lengths, without the overflow of
/// length + block - 1 (explain takes any int64 length).
int64_t tilesOver(int64_t length, int64_t block) { return (length - 1) / block + 1; }

/// Whether the grid of `blockQ` x `blockKv` tiles over the lengths has more
/// than kMaxCountedTiles: rows > limit / cols rather than rows * cols > limit.
bool overCountLimit(const attnc::ExplainOptions &o, int64_t blockQ, int64_t blockKv) {
  return tilesOver(o.seqQ, blockQ) > kMaxCountedTiles / tilesOver(o.seqKv, blockKv);
}

/// Why explain will not count or draw this grid, or "".
std::string gridTooLarge(const attnc::ExplainOptions &o, int64_t blockQ, int64_t blockKv,
                         bool drawing) {
  int64_t rows = tilesOver(o.seqQ, blockQ), cols = tilesOver(o.seqKv, blockKv);
  // Kept pairs are counted on a grid of at most 64 x 64 tiles.
  bool tooMany = overCountLimit(o, blockQ, blockKv) ||
                 overCountLimit(o, std::min<int64_t>(blockQ, 64), std::min<int64_t>(blockKv, 64));
  if (tooMany)
    return llvm::formatv("explain counts tiles one by one, and {0} x {1} tiles is more than "
                         "2^26: use shorter lengths or larger tiles (--schedule block_q, "
                         "block_kv)", rows, cols);
  if (drawing && rows * cols > kMaxDrawnTiles)
    return llvm::formatv("--svg draws at most 2^18 tiles, got {0} x {1}", rows, cols);
  return "";
}

/// What the interval analysis of the mask_mod decides for one tile the mask
/// attribute keeps, over every batch entry and head at once (counted).
attnc::TileVerdict maskModVerdict(AttentionSpecOpInterface op, const attnc::ExplainOptions &o,
                                  attnc::IndexRange q, attnc::IndexRange kv, TileMap &map,
                                  const attnc::LoadValuesFn &values) {
  attnc::TileVerdict v = attnc::classifyMaskModTile(
      op.getMaskMod(), {0, o.batch - 1}, {0, int64_t(op.getHeads()) - 1}, q, kv, values);
  map.modNever += v == attnc::TileVerdict::Never;
  map.modAlways += v == attnc::TileVerdict::Always;
  return v;
}

/// With a mask_mod the kernels classify at run time (canEmitMaskModVerdict), a
/// tile it keeps nothing of is skipped and one it keeps whole keeps the
/// attribute's class; any other kept tile is masked per element (partial).
TileClass withMaskMod(TileClass byMask, attnc::TileVerdict v, bool kernelsDecide) {
  if (!kernelsDecide || byMask == TileClass::empty)
    return byMask == TileClass::empty ? byMask : TileClass::partial;
  if (v == attnc::TileVerdict::Never)
    return TileClass::empty;
  return v == attnc::TileVerdict::Always ? byMask : TileClass::partial;
}

TileMap classifyAll(AttentionSpecOpInterface op, const attnc::ExplainOptions &o, int64_t blockQ,
                    int64_t blockKv, bool keepClasses) {
  TileMap map;
  map.qTiles = tilesOver(o.seqQ, blockQ);
  map.kvTiles = tilesOver(o.seqKv, blockKv);
  bool maskMod = !op.getMaskMod().empty();
  map.classifying = attnc::backendFor(o.selection).classifiesMaskModTiles();
  map.kernelsDecide =
      maskMod && map.classifying && attnc::canEmitMaskModVerdict(op.getMaskMod());
  attnc::LoadValuesFn values;
  if (maskMod && !(map.reads = inputsRead(op.getMaskMod())).empty()) {
    mlir::ArrayAttr decls = op.getInputsAttr();
    map.inputsGiven = llvm::all_of(decls.getAsRange<ModInputAttr>(), [&](ModInputAttr d) {
      return o.inputs.count(d.getName().getValue());
    });
    if (map.inputsGiven)
      values = valuesOf(o.inputs);
  }
  attnc::mask::Mask rule = op.getMask().toMaskRule(); // once, not per tile
  for (int64_t qt = 0; qt < map.qTiles; ++qt)
    for (int64_t kt = 0; kt < map.kvTiles; ++kt) {
      int64_t q0 = qt * blockQ, q1 = std::min(o.seqQ, q0 + blockQ);
      int64_t k0 = kt * blockKv, k1 = std::min(o.seqKv, k0 + blockKv);
      TileClass c = attnc::mask::classifyTile(rule, /*hasMaskMod=*/false,
                                              {q0, q1, k0, k1, o.seqQ, o.seqKv});
      if (maskMod && c != TileClass::empty)
        c = withMaskMod(c, maskModVerdict(op, o, {q0, q1 - 1}, {k0, k1 - 1}, map, values),
                        map.kernelsDecide);
      if (keepClasses)
        map.classes.push_back(c);
      (c == TileClass::full ? map.full : c == TileClass::partial ? map.partial : map.empty)++;
      if (c != TileClass::empty)
        map.visitedPairs += (q1 - q0) * (k1 - k0);
    }
  return map;
}

void writeTileSvg(const TileMap &map, StringRef title, llvm::raw_ostream &os) {
  double cell = std::clamp(480.0 / std::max(map.qTiles, map.kvTiles), 2.0, 24.0);
  double w = map.kvTiles * cell, h = map.qTiles * cell;
  os << llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0:f0}' "
                      "height='{1:f0}' font-family='sans-serif' font-size='12'>\n"
                      "<rect width='100%' height='100%' fill='white'/>\n"
                      "<text x='40' y='20' font-weight='bold'>{2}</text>\n",
                      w + 200, h + 70, title);
  const char *colours[] = {"#f0f0f0", "#f4a259", "#3b5b92"}; // empty, partial, full
  for (int64_t qt = 0; qt < map.qTiles; ++qt)
    for (int64_t kt = 0; kt < map.kvTiles; ++kt)
      os << llvm::formatv("<rect x='{0:f1}' y='{1:f1}' width='{2:f1}' height='{2:f1}' "
                          "fill='{3}' stroke='white' stroke-width='0.5'/>\n",
                          40 + kt * cell, 40 + qt * cell, cell,
                          colours[static_cast<int>(map.classes[qt * map.kvTiles + kt])]);
  os << llvm::formatv("<text x='{0:f0}' y='{1:f0}' text-anchor='middle'>KV tile</text>\n"
                      "<text transform='translate(28,{2:f0}) rotate(-90)' "
                      "text-anchor='middle'>query tile</text>\n",
                      40 + w / 2, 60 + h, 40 + h / 2);
  const char *names[] = {"empty (skipped)", "partial (masked per element)", "full (no mask)"};
  int64_t counts[] = {map.empty, map.partial, map.full};
  for (int i = 0; i < 3; ++i)
    os << llvm::formatv("<rect x='{0:f0}' y='{1}' width='14' height='14' fill='{2}'/>"
                        "<text x='{3:f0}' y='{4}'>{5}: {6}</text>\n",
                        w + 56, 40 + 22 * i, colours[2 - i], w + 76, 52 + 22 * i,
                        names[2 - i], counts[2 - i]);
  os << "</svg>\n";
}

/// A split-KV decode kernel (num_splits): its packed rows, how the mask's key
/// range is split (as DecodeKernel.cpp splits it), the bytes of K and V it
/// reads and its scratch.
void describeDecode(AttentionSpecOpInterface op, const attnc::ExplainOptions &o,
                    int64_t blockKv, llvm::raw_ostream &os) {
  attnc::mask::IntEmitter e;
  auto [lo, hi] = attnc::mask::Classifier<attnc::mask::IntEmitter>(e).keyRange(
      op.getMask().toMaskRule(), {0, o.seqQ, 0, o.seqKv, o.seqQ, o.seqKv});
  int64_t first = std::max<int64_t>(lo, 0) / blockKv;
  int64_t end = tilesOver(std::max<int64_t>(std::min(hi, o.seqKv), 1), blockKv);
  int64_t tiles = std::max<int64_t>(end - first, 0);
  int64_t splits = decodeSplitCount(*op.getNumSplits());
  int64_t minTiles = decodeMinTiles(*op.getNumSplits(), blockKv);
  int64_t run = std::max(int64_t(llvm::divideCeil(tiles, splits)), minTiles);
  int64_t group = op.getHeads() / op.getKvHeads();
  double kvBytes = 2.0 * o.batch * op.getKvHeads() * o.seqKv * op.getDim() *
                   (op.getDtype().getIntOrFloatBitWidth() / 8);
  double scratch = 4.0 * o.batch * op.getHeads() * splits * o.seqQ * (op.getDim() + 1);
  os << llvm::formatv("decode: {0} query heads x seq_q {1} = {2} rows per KV head, together; "
                      "{3} KV tiles of the mask's range per (batch, KV head) in runs of {4} "
                      "over {5} splits ({6} used); K and V read once: {7:f1} MiB; scratch "
                      "{8:f1} KiB\n",
                      group, o.seqQ, group * o.seqQ, tiles, run, splits,
                      run ? int64_t(llvm::divideCeil(tiles, run)) : 0, kvBytes / (1 << 20),
                      scratch / 1024);
  if (std::optional<uint64_t> page = op.getPageSize()) {
    os << "KV cache: each sequence's own length (int32 kv_lens [batch]; the figures above take "
          "every one as seq_kv)";
    if (*page)
      os << llvm::formatv("; {3}pages of {0} keys [num_pages, {1}, {2}] named by int32 "
                          "block_table [batch, max_pages], every entry checked before the "
                          "launch",
                          int64_t(*page),
                          op.getPagesHeadMajor()
                              ? llvm::formatv("{0}, {1}", op.getKvHeads(), *page).str()
                              : llvm::formatv("{0}, {1}", *page, op.getKvHeads()).str(),
                          op.getDim(), op.getPagesHeadMajor() ? "head-major " : "");
    os << "\n";
  }
}

/// A linear attention kernel: its work items, FLOPs and state.
void explainLinear(KernelOp kernel, LinearAttentionOp op, const attnc::ExplainOptions &o,
                   llvm::raw_ostream &os) {
  int64_t dk = op.getDim(), dv = op.getValueDimOrDefault();
  int64_t scheduled = attnc::scheduledLinearChunk(o.selection);
  int64_t c = scheduled ? scheduled : op.getChunkOrDefault();
  int64_t seqKv = op.getCausal() ? o.seqQ : o.seqKv;
  os << "kernel @" << kernel.getSymName() << ": linear attention, " << op.getHeads()
     << " heads (" << op.getKvHeads() << " kv), head_dim " << dk << ", value_dim " << dv
     << ", phi = " << stringifyFeatureMap(op.getFeatureMap())
     << (op.getCausal() ? ", causal" : ", non-causal")
     << (op.getNormalize() ? ", normalized" : ", unnormalized") << "\n";
  os << llvm::formatv("problem: batch {0}, seq_q {1}, seq_kv {2}\n", o.batch, o.seqQ, seqKv);
  double heads = double(o.batch) * op.getHeads(), kvHeads = double(o.batch) * op.getKvHeads();
  // Causal: per chunk and query head, Q K^T and A V over the lower triangle
  // (about c^2 / 2 pairs each) and Q S; per chunk and KV head, K^T V.
  double flops = op.getCausal()
                     ? heads * o.seqQ * (double(c) * (dk + dv) + 2.0 * dk * dv) +
                           kvHeads * 2.0 * seqKv * dk * dv
                     : heads * 2.0 * o.seqQ * dk * dv + kvHeads * 2.0 * seqKv * dk * dv;
  double softmax = heads * 2.0 * o.seqQ * seqKv * (dk + dv) / (op.getCausal() ? 2 : 1);
  os << llvm::formatv("FLOPs: {0:e3} (softmax attention of these sizes: {1:e3}, {2:f1}x)\n",
                      flops, softmax, softmax / std::max(flops, 1.0));
  if (op.getCausal())
    os << llvm::formatv("work items: batch x kv_heads = {0}, each its {1}-row chunks in order "
                        "(every query head of its KV head per chunk; chunk {2})\n",
                        int64_t(kvHeads), c,
                        scheduled ? "from the schedule" : "from the spec or its default");
  else
    os << llvm::formatv("work items: batch x kv_heads = {0} (the state), then batch x heads x "
                        "query tiles of 64 rows = {1}\n",
                        int64_t(kvHeads),
                        int64_t(heads) * ((o.seqQ + 63) / 64));
  os << llvm::formatv("state: float32 {0} x {1} + {0} per KV head = {2:f1} KiB per sequence{3}\n",
                      dk, dv, op.getKvHeads() * (dk * dv + dk) * 4 / 1024.0,
                      op.getCarryState() ? " (state = carry: taken and returned)" : "");
}

/// A multi-head attention kernel: its projections' FLOPs beside the
/// attention's (explained as its own kernel would be).
void explainMultiHead(KernelOp kernel, MultiHeadAttentionOp op, const attnc::ExplainOptions &o,
                      llvm::raw_ostream &os) {
  AttentionSpecOpInterface attention = op.getAttention();
  double e = op.getEmbedSize(), h = attention.getHeads(), g = attention.getKvHeads();
  double d = attention.getDim(), tokens = double(o.batch) * o.seqQ;
  double projections = 2 * tokens * e * ((h + 2 * g) * d + h * d);
  double attend = 4 * tokens * o.seqQ * h * d;
  os << "kernel @" << kernel.getSymName() << ": multi-head self-attention, embed_dim "
     << op.getEmbedSize() << ", " << attention.getHeads() << " heads (" << attention.getKvHeads()
     << " kv), head_dim " << attention.getDim() << ", mask " << attention.getMask() << "\n";
  os << llvm::formatv("problem: batch {0}, seq {1}\n", o.batch, o.seqQ);
  os << llvm::formatv("FLOPs: projections {0:e3}, attention at most {1:e3} (dense); the "
                      "projections' share {2:f1}%\n",
                      projections, attend, 100 * projections / (projections + attend));
  os << llvm::formatv("work items: qkv batch x {0} row tiles of 256 x {1} column tiles of 64, "
                      "then the attention's batch x heads x query tiles, then out batch x {0} x "
                      "{2}\n",
                      (o.seqQ + 255) / 256,
                      int64_t(std::ceil(h * d / 64) + 2 * std::ceil(g * d / 64)),
                      int64_t(std::ceil(e / 64)));
  if (op.hasKeyLengths())
    os << "key padding: int32 key_lengths [batch]; sequence b's attention visits the KV tiles "
          "of its first key_lengths[b] keys alone\n";
}

/// A projection kernel: its FLOPs, the bytes its weight takes, its items.
void explainProjection(KernelOp kernel, ProjectionOp op, const attnc::ExplainOptions &o,
                       llvm::raw_ostream &os) {
  double rows = double(o.batch) * o.seqQ, in = op.getIn(), out = op.getOut();
  os << "kernel @" << kernel.getSymName() << ": projection, " << op.getIn() << " -> "
     << op.getOut() << " features, " << op.getDtype() << ", "
     << (op.isOnnx() ? "MatMul weight [in, out]" : "nn.Linear weight [out, in]") << "\n";
  os << llvm::formatv("problem: batch {0}, seq {1}\n", o.batch, o.seqQ);
  os << llvm::formatv("FLOPs: {0:e3} (2 x rows x in x out); the weight {1:f1} MiB in {2}\n",
                      2 * rows * in * out,
                      in * out * op.getDtype().getIntOrFloatBitWidth() / 8 / double(1 << 20),
                      op.getDtype());
  os << llvm::formatv("work items: batch x {0} row tiles of 256 x {1} column tiles of 64, each "
                      "packing its 64 weight columns ({2:f0} KiB in f32) once\n",
                      (o.seqQ + 255) / 256, (op.getOut() + 63) / 64, in * 64 * 4 / 1024);
}

llvm::Error explainKernel(KernelOp kernel, const attnc::ExplainOptions &o,
                          llvm::raw_ostream &os, std::string *svg) {
  if (auto mha = dyn_cast_or_null<MultiHeadAttentionOp>(kernel.getCompute().getOperation())) {
    explainMultiHead(kernel, mha, o, os);
    return llvm::Error::success();
  }
  if (auto linear = dyn_cast_or_null<LinearAttentionOp>(kernel.getCompute().getOperation())) {
    explainLinear(kernel, linear, o, os);
    return llvm::Error::success();
  }
  if (auto projection = dyn_cast_or_null<ProjectionOp>(kernel.getCompute().getOperation())) {
    explainProjection(kernel, projection, o, os);
    return llvm::Error::success();
  }
  AttentionSpecOpInterface op = kernel.getSpec();
  const attnc::Schedule &schedule = o.selection.schedule;
  // A kernel already in its tiled form (attn.flash) compiles with its own tile sizes.
  FlashOp flash = kernel.getFlash();
  int64_t blockQ = flash ? flash.getTileQ() : attnc::resolvedBlockQ(o.selection, op.getDim());
  std::optional<DecodeTile> decode;
  if (op.getNumSplits())
    decode = DecodeTile{op.getDim(), op.getDtype().isBF16()};
  int64_t blockKv = flash ? flash.getTileKv()
                          : attnc::resolvedBlockKv(
                                o.selection, op.getDtype().getIntOrFloatBitWidth() / 8, decode);
  std::string tooLarge = gridTooLarge(o, blockQ, blockKv, svg != nullptr);
  if (!tooLarge.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), tooLarge);
  // Inputs given for this kernel have the shapes its spec gives these lengths.
  if (ArrayAttr decls = op.getInputsAttr())
    for (auto decl : decls.getAsRange<ModInputAttr>()) {
      auto given = o.inputs.find(decl.getName().getValue());
      attnc::ProblemSize size{o.batch, o.seqQ, o.seqKv};
      if (given != o.inputs.end() &&
          given->second.shape != attnc::modInputShape(op, decl, size))
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "--input " + decl.getName().getValue() + " has shape " +
                given->second.shapeString() + " but @" + kernel.getSymName() +
                " needs " + attnc::shapeString(attnc::modInputShape(op, decl, size)) +
                " for these lengths");
    }
  TileMap map = classifyAll(op, o, blockQ, blockKv, svg != nullptr);
  // The totals below count tiles of every (batch, head): in 64 bits, or refused.
  int64_t perHead, perHeadTiles, totalTiles;
  if (llvm::MulOverflow(o.batch, int64_t(op.getHeads()), perHead) ||
      llvm::MulOverflow(map.qTiles, map.kvTiles, perHeadTiles) ||
      llvm::MulOverflow(perHead, perHeadTiles, totalTiles))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::formatv("batch {0} x {1} heads x {2} x {3} tiles is more than a 64-bit count",
                      o.batch, op.getHeads(), map.qTiles, map.kvTiles)
            .str());
  // A backward kernel's five products against the forward's two (FlashAttention's 2.5x).
  bool backward = op.hasOutput(OutputKind::dq);
  double flopPerPair = (backward ? 10.0 : 4.0) * op.getDim();
  double dense = flopPerPair * perHead * o.seqQ * o.seqKv;
  double computed = flopPerPair * perHead * map.visitedPairs;
  os << "kernel @" << kernel.getSymName() << ": " << op.getHeads() << " heads ("
     << op.getKvHeads() << " kv), head_dim " << op.getDim() << ", mask "
     << op.getMask() << (op.getScoreMod().empty() ? "" : ", score_mod")
     << (op.getMaskMod().empty() ? "" : ", mask_mod") << "\n";
  os << llvm::formatv("problem: batch {0}, seq_q {1}, seq_kv {2}\n", o.batch,
                      o.seqQ, o.seqKv);
  os << llvm::formatv("tiles per (batch, head): {0} x {1} = {2}; full {3}, partial "
                      "{4}, empty {5}; visited {6} ({7:f1}%)\n",
                      map.qTiles, map.kvTiles, perHeadTiles, map.full,
                      map.partial, map.empty, map.full + map.partial,
                      100.0 * (map.full + map.partial) /
                          std::max<int64_t>(1, perHeadTiles));
  if (!op.getMaskMod().empty()) {
    int64_t kept = map.full + map.partial + (map.kernelsDecide ? map.modNever : 0);
    os << llvm::formatv("mask_mod over the {0} tiles the mask attribute keeps, by interval "
                        "analysis (every batch and head): {1} keep nothing, {2} keep every "
                        "pair, {3} undecided; ",
                        kept, map.modNever, map.modAlways,
                        kept - map.modNever - map.modAlways);
    if (map.kernelsDecide)
      os << "the kernels skip the first and mask only the undecided per element (per batch "
            "and head, so where the body reads b or h they may skip more)\n";
    else if (map.classifying)
      os << "this body is outside what the kernels classify at run time: they visit them all "
            "and apply it per element\n";
    else
      os << "the " << o.selection.backend << " backend's kernels for "
         << o.selection.targetName()
         << " classify tiles by the mask attribute alone: they visit them all and apply the "
            "mask_mod per element\n";
    if (!map.reads.empty() && map.kernelsDecide)
      os << (map.inputsGiven
                 ? "mask_mod reads " + map.reads + ": decided from the --input values\n"
                 : "mask_mod reads " + map.reads + ": the kernels decide its tiles from their "
                   "values at run time; give them with --input NAME=FILE.npy to count those\n");
  }
  os << llvm::formatv("tiles in total: visited {0} of {1}\n",
                      (map.full + map.partial) * perHead,
                      totalTiles);
  os << llvm::formatv("FLOPs{0}: dense {1:e3}; computed in visited tiles {2:e3}",
                      backward ? " (backward: 2.5 x the forward's)" : "", dense, computed);
  os << llvm::formatv("; useful (kept by the mask attribute{0}) {1:e3}",
                      op.getMaskMod().empty() ? "" : ", before mask_mod",
                      flopPerPair * perHead *
                          countKeptPairs(op.getMask(), o.seqQ, o.seqKv));
  os << "\n";
  if (op.getAdditiveAttr()) // counted as the dot products' FLOPs: the same steps
    os << llvm::formatv("additive scores: a tanh per visited pair and head_dim element as "
                        "well ({0:e3}), counted above as a multiply-add each\n",
                        computed / 4);
  if (op.getNumSplits()) {
    describeDecode(op, o, blockKv, os);
    // A CUDA CTA computes one KV head, its tile the group's rows padded (FlashMmaDecode.cpp);
    // decode on a GPU target is the MLIR CUDA backend's (Halide refuses it).
    bool cuda = !o.selection.gpuTarget.empty();
    int64_t perItem = cuda ? 1 : op.decodeKvHeadsPerItem();
    int64_t items = o.batch * op.getKvHeads() / perItem * decodeSplitCount(*op.getNumSplits());
    int64_t rows = op.getHeads() / op.getKvHeads() * decodeMaxSeqQ(op.getMaxSeq());
    attnc::describeSchedule(o.selection, cuda ? decodeBlockQ(rows) : blockQ, blockKv,
                            op.getDim(), op.getDtype().getIntOrFloatBitWidth() / 8, items,
                            perItem == 1
                                ? "batch x kv_heads x splits, then a merge over batch x heads"
                                : "batch x kv_heads / " + std::to_string(perItem) +
                                      " (KV heads per item, token-major cache) x splits, then a "
                                      "merge over batch x heads",
                            os, /*decode=*/true);
  } else if (backward) {
    auto tiled = dyn_cast_or_null<FlashBackwardOp>(kernel.getCompute().getOperation());
    int64_t chunks = tiled ? tiled.getChunks() : kDefaultKvChunks;
    std::string tables; // the f32 inputs' gradients, each its own last phase
    if (ArrayAttr inputs = op.getInputsAttr())
      for (auto input : inputs.getAsRange<ModInputAttr>())
        if (input.getElementType().isF32())
          tables += ", then " + cast<StringAttr>(input.getDims()[0]).getValue().str() + " (d_" +
                    input.getName().getValue().str() + ")";
    attnc::describeSchedule(o.selection, blockQ, blockKv, op.getDim(),
                            op.getDtype().getIntOrFloatBitWidth() / 8,
                            o.batch * op.getKvHeads() * chunks,
                            "batch x kv_heads x " + std::to_string(chunks) +
                                " KV chunks (dk, dv, dq partials), then batch x heads x query "
                                "tiles (dq)" + tables,
                            os);
  } else {
    attnc::describeSchedule(o.selection, blockQ, blockKv, op.getDim(),
                            op.getDtype().getIntOrFloatBitWidth() / 8, perHead * map.qTiles,
                            "batch x heads x query tiles", os);
  }
  if (op.getVarlen())
    os << "varlen: sequences packed end to end between int32 cu_seqlens_q and cu_seqlens_kv "
          "offsets [batch + 1] (the figures above take every one as seq_q x seq_kv); the "
          "grid spans the longest sequence, a shorter one's tiles past its end return at "
          "once"
       << (op.getPageSize() ? "; each attends the first kv_lens[b] of its keys (int32 "
                              "[batch], kv_cache = lengths)"
                            : "")
       << "\n";
  if (svg) {
    llvm::raw_string_ostream s(*svg);
    std::string title = ("@" + kernel.getSymName() + ": " + llvm::Twine(map.qTiles) +
                         " x " + llvm::Twine(map.kvTiles) + " tiles of " +
                         llvm::Twine(blockQ) + " x " + llvm::Twine(blockKv))
                            .str();
    writeTileSvg(map, title, s);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error attnc::explain(ModuleOp normalized, const ExplainOptions &o,
                           llvm::raw_ostream &os) {
  if (o.batch <= 0 || o.seqQ <= 0 || o.seqKv <= 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "explain needs positive --batch, --seq-q and --seq-kv");
  os << o.tuningNotes;
  std::string svg;
  for (KernelOp kernel : normalized.getOps<KernelOp>())
    if (llvm::Error err =
            explainKernel(kernel, o, os, svg.empty() && !o.svgPath.empty() ? &svg : nullptr))
      return err;
  if (o.svgPath.empty())
    return llvm::Error::success();
  std::error_code ec;
  llvm::raw_fd_ostream file(o.svgPath, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + o.svgPath);
  file << svg;
  os << "drew " << o.svgPath << " (the first kernel's tile map)\n";
  return llvm::Error::success();
}
