//===- FlashBackwardEntry.cpp - attn.flash_backward as a kernel family ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The attention backward family's side of KernelFamilyOpInterface: the facts
// its entry records and its kernel interface from them
// (attnc::backwardInterface).
//
//===----------------------------------------------------------------------===//

#include "EntryFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

StringRef FlashBackwardOp::getFamily() { return "attention backward"; }

DictionaryAttr FlashBackwardOp::describeEntry(StringRef name, int64_t deviceType) {
  Builder b(getContext());
  NamedAttrList facts = commonEntryFacts(*this, name, getTileQ());
  facts.set("kv_chunks", b.getI64IntegerAttr(getChunks()));
  if (deviceType != kDLCPU)
    facts.set("device_type", b.getI64IntegerAttr(deviceType));
  return facts.getDictionary(getContext());
}

FailureOr<attnc::KernelInterface>
FlashBackwardOp::interfaceFromEntry(Location loc, DictionaryAttr entry) {
  auto fail = [&]() { return entryError(loc, entry); };
  attnc::AttentionFacts f;
  int64_t chunks = 0;
  if (failed(readCommonEntry(entry, fail, f)) ||
      failed(readEntryInts(entry, {{"kv_chunks", &chunks}}, fail)))
    return failure();
  return attnc::backwardInterface(f, chunks);
}
