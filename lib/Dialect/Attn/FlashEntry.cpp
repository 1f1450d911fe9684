//===- FlashEntry.cpp - attn.flash as a kernel family ---------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The attention family's side of KernelFamilyOpInterface: the facts its
// entry records (heads, head_dim, dtype, layout, outputs, block_q, length
// bounds) and its kernel interface from them (attnc::attentionInterface).
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"

#include "attnc/Support/MaskRules.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

StringRef FlashOp::getFamily() { return "attention"; }

DictionaryAttr FlashOp::describeEntry(StringRef name, int64_t deviceType) {
  Builder b(getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  // The C ABI always takes and fills `out` (an lse-only spec too): one
  // signature for every kernel, and out costs nothing extra to write.
  int64_t outputs = 1 | (hasOutput(OutputKind::lse) ? 2 : 0) |
                    (hasOutput(OutputKind::weights) ? 4 : 0);
  std::optional<ArrayRef<int64_t>> maxSeq = getMaxSeq();
  // A block layout bounds the lengths too (0: unbounded).
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(getMask().toMaskRule());
  auto bound = [](int64_t given, int64_t c) {
    int64_t b = c == attnc::mask::kUnbounded ? 0 : c;
    return given > 0 && b > 0 ? std::min(given, b) : std::max(given, b);
  };
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("op", b.getStringAttr(getOperationName())),
      b.getNamedAttr("num_heads", i64(getHeads())),
      b.getNamedAttr("num_kv_heads", i64(getKvHeads())),
      b.getNamedAttr("head_dim", i64(getDim())),
      b.getNamedAttr("dtype", TypeAttr::get(getDtype())),
      b.getNamedAttr("layout", i64(static_cast<int64_t>(getLayout()))),
      b.getNamedAttr("outputs", i64(outputs)),
      b.getNamedAttr("block_q", i64(getTileQ())),
      b.getNamedAttr("max_seq_q", i64(bound(maxSeq ? (*maxSeq)[0] : 0, cover.q))),
      b.getNamedAttr("max_seq_kv", i64(bound(maxSeq ? (*maxSeq)[1] : 0, cover.kv))),
  });
  // A decode kernel: its splits per (batch, KV head), and seq_q's bound.
  if (std::optional<uint64_t> splits = getNumSplits()) {
    facts.set("num_splits", i64(decodeSplitCount(*splits)));
    int64_t q = bound(maxSeq ? (*maxSeq)[0] : 0, cover.q);
    facts.set("max_seq_q", i64(q > 0 ? std::min(q, decodeMaxSeqQ(maxSeq)) : decodeMaxSeqQ(maxSeq)));
    if (std::optional<uint64_t> page = getPageSize())
      facts.set("page_size", i64(int64_t(*page)));
    if (getPagesHeadMajor())
      facts.set("pages_head_major", b.getUnitAttr());
    facts.set("kv_heads_per_item", i64(decodeKvHeadsPerItem()));
  }
  if (ArrayAttr inputs = getInputsAttr())
    facts.set("inputs", inputs);
  if (getVarlen()) {
    facts.set("varlen", b.getUnitAttr());
    if (getPageSize()) // kv_cache = lengths: the keys each sequence uses
      facts.set("page_size", i64(0));
  }
  // Tile functions run on the runtime's CPU threads; a grid kernel states its device.
  if (deviceType != kDLCPU)
    facts.set("device_type", i64(deviceType));
  return facts.getDictionary(getContext());
}

FailureOr<attnc::KernelInterface> FlashOp::interfaceFromEntry(Location loc,
                                                              DictionaryAttr entry) {
  auto fail = [&]() {
    InFlightDiagnostic d = mlir::emitError(loc, "attn-emit-cpu-entry: kernel '");
    if (auto name = dyn_cast_or_null<StringAttr>(entry.get("name")))
      d << name.getValue();
    return std::move(d << "': ");
  };
  attnc::AttentionFacts f;
  int64_t layout = 0, outputs = 0;
  std::pair<StringRef, int64_t *> ints[] = {
      {"num_heads", &f.heads}, {"num_kv_heads", &f.kvHeads}, {"head_dim", &f.headDim},
      {"block_q", &f.blockQ},  {"max_seq_q", &f.maxSeqQ},   {"max_seq_kv", &f.maxSeqKv},
      {"layout", &layout},     {"outputs", &outputs}};
  for (auto [name, slot] : ints) {
    auto value = dyn_cast_or_null<IntegerAttr>(entry.get(name));
    if (!value)
      return fail() << "no integer '" << name << "' in attn.cpu_kernels";
    *slot = value.getInt();
  }
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"layout", layout}, {"outputs", outputs}})
    if (!llvm::isInt<32>(value))
      return fail() << "'" << name << "' is " << value << ", which does not fit int32";
  if (auto splits = dyn_cast_or_null<IntegerAttr>(entry.get("num_splits")))
    f.splits = splits.getInt();
  if (auto page = dyn_cast_or_null<IntegerAttr>(entry.get("page_size")))
    f.pageSize = page.getInt();
  if (auto per = dyn_cast_or_null<IntegerAttr>(entry.get("kv_heads_per_item")))
    f.kvHeadsPerItem = per.getInt();
  f.varlen = entry.contains("varlen");
  if (auto inputs = dyn_cast_or_null<ArrayAttr>(entry.get("inputs")))
    for (Attribute a : inputs) {
      auto input = dyn_cast<ModInputAttr>(a);
      if (!input || !input.getElementType().isIntOrFloat())
        return fail() << "'inputs' holds " << a << ", not an #attn.input";
      Type t = input.getElementType();
      std::string dims;
      for (StringRef dim : input.getDims().getAsValueRange<StringAttr>())
        dims += (dims.empty() ? "" : ",") + dim.str();
      f.inputs.push_back({input.getName().str(), dims, t.isF32() ? kDLFloat : kDLInt,
                          int32_t(t.getIntOrFloatBitWidth())});
    }
  f.pagesHeadMajor = entry.contains("pages_head_major");
  f.layout = int32_t(layout);
  f.outputs = int32_t(outputs);
  auto dtype = dyn_cast_or_null<TypeAttr>(entry.get("dtype"));
  if (!dtype)
    return fail() << "no 'dtype' type in attn.cpu_kernels";
  Type type = dtype.getValue();
  if (!type.isF32() && !type.isF16() && !type.isBF16())
    return fail() << "dtype " << type << " has no DLPack spelling here; expected f32, f16 or bf16";
  f.dtypeCode = type.isBF16() ? kDLBfloat : kDLFloat;
  f.dtypeBits = int32_t(type.getIntOrFloatBitWidth());
  return attnc::attentionInterface(f);
}
