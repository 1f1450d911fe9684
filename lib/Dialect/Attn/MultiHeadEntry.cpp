//===- MultiHeadEntry.cpp - attn.multihead_attention as a kernel family ---===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The multi-head attention family's side of KernelFamilyOpInterface: the
// facts its entry records and its kernel interface from them
// (attnc::multiHeadInterface).
//
//===----------------------------------------------------------------------===//

#include "EntryFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

StringRef MultiHeadAttentionOp::getFamily() { return "multi-head attention"; }

DictionaryAttr MultiHeadAttentionOp::describeEntry(StringRef name, int64_t deviceType) {
  Builder b(getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  AttentionSpecOpInterface attention = getAttention();
  auto flash = dyn_cast<FlashOp>(attention.getOperation());
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("op", b.getStringAttr(getOperationName())),
      b.getNamedAttr("num_heads", i64(attention.getHeads())),
      b.getNamedAttr("num_kv_heads", i64(attention.getKvHeads())),
      b.getNamedAttr("head_dim", i64(attention.getDim())),
      b.getNamedAttr("embed_dim", i64(getEmbedSize())),
      b.getNamedAttr("dtype", TypeAttr::get(getDtype())),
      b.getNamedAttr("layout", i64(0)),
      b.getNamedAttr("block_q", i64(flash ? flash.getTileQ() : 64)),
  });
  if (isOnnx())
    facts.set("onnx_weights", b.getUnitAttr());
  if (hasKeyLengths())
    facts.set("key_lengths", b.getUnitAttr());
  if (deviceType != kDLCPU)
    facts.set("device_type", i64(deviceType));
  return facts.getDictionary(getContext());
}

FailureOr<attnc::KernelInterface>
MultiHeadAttentionOp::interfaceFromEntry(Location loc, DictionaryAttr entry) {
  auto fail = [&]() { return entryError(loc, entry); };
  attnc::MultiHeadFacts f;
  int32_t layout = 0;
  if (failed(readEntryInts(entry,
                           {{"num_heads", &f.heads},
                            {"num_kv_heads", &f.kvHeads},
                            {"head_dim", &f.headDim},
                            {"embed_dim", &f.embedDim},
                            {"block_q", &f.blockQ}},
                           fail)) ||
      failed(readLayoutAndDtype(entry, fail, layout, f.dtypeCode, f.dtypeBits)))
    return failure();
  f.onnx = entry.contains("onnx_weights");
  f.keyLengths = entry.contains("key_lengths");
  return attnc::multiHeadInterface(f);
}
