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

#include "EntryFacts.h"

#include "attnc/Support/MaskRules.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

StringRef FlashOp::getFamily() { return "attention"; }

DictionaryAttr FlashOp::describeEntry(StringRef name, int64_t deviceType) {
  Builder b(getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  NamedAttrList facts = commonEntryFacts(*this, name, getTileQ());
  // The C ABI always takes and fills `out` (an lse-only spec too): one
  // signature for every kernel, and out costs nothing extra to write.
  facts.set("outputs", i64(1 | (hasOutput(OutputKind::lse) ? 2 : 0) |
                           (hasOutput(OutputKind::weights) ? 4 : 0)));
  std::optional<ArrayRef<int64_t>> maxSeq = getMaxSeq();
  // A decode kernel: its splits per (batch, KV head), and seq_q's bound.
  if (std::optional<uint64_t> splits = getNumSplits()) {
    facts.set("num_splits", i64(decodeSplitCount(*splits)));
    int64_t q = cast<IntegerAttr>(facts.get("max_seq_q")).getInt();
    facts.set("max_seq_q", i64(q > 0 ? std::min(q, decodeMaxSeqQ(maxSeq)) : decodeMaxSeqQ(maxSeq)));
    if (std::optional<uint64_t> page = getPageSize())
      facts.set("page_size", i64(int64_t(*page)));
    if (getPagesHeadMajor())
      facts.set("pages_head_major", b.getUnitAttr());
    // A device kernel's CTA computes one KV head (FlashMmaDecode.cpp).
    facts.set("kv_heads_per_item", i64(deviceType == kDLCPU ? decodeKvHeadsPerItem() : 1));
  }
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
  auto fail = [&]() { return entryError(loc, entry); };
  attnc::AttentionFacts f;
  int64_t outputs = 0;
  if (failed(readCommonEntry(entry, fail, f)) ||
      failed(readEntryInts(entry, {{"outputs", &outputs}}, fail)))
    return failure();
  if (!llvm::isInt<32>(outputs))
    return fail() << "'outputs' is " << outputs << ", which does not fit int32";
  if (auto splits = dyn_cast_or_null<IntegerAttr>(entry.get("num_splits")))
    f.splits = splits.getInt();
  if (auto page = dyn_cast_or_null<IntegerAttr>(entry.get("page_size")))
    f.pageSize = page.getInt();
  if (auto per = dyn_cast_or_null<IntegerAttr>(entry.get("kv_heads_per_item")))
    f.kvHeadsPerItem = per.getInt();
  f.varlen = entry.contains("varlen");
  f.pagesHeadMajor = entry.contains("pages_head_major");
  f.outputs = int32_t(outputs);
  return attnc::attentionInterface(f);
}
