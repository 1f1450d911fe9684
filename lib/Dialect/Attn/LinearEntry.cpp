//===- LinearEntry.cpp - attn.linear_attention as a kernel family ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The linear attention family's side of KernelFamilyOpInterface: the facts
// its entry records and its kernel interface from them
// (attnc::linearInterface).
//
//===----------------------------------------------------------------------===//

#include "EntryFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

StringRef LinearAttentionOp::getFamily() { return "linear attention"; }

DictionaryAttr LinearAttentionOp::describeEntry(StringRef name, int64_t deviceType) {
  Builder b(getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("op", b.getStringAttr(getOperationName())),
      b.getNamedAttr("num_heads", i64(getHeads())),
      b.getNamedAttr("num_kv_heads", i64(getKvHeads())),
      b.getNamedAttr("head_dim", i64(getDim())),
      b.getNamedAttr("value_dim", i64(getValueDimOrDefault())),
      b.getNamedAttr("dtype", TypeAttr::get(getDtype())),
      b.getNamedAttr("layout", i64(static_cast<int64_t>(getLayout()))),
  });
  if (getCausal())
    facts.set("causal", b.getUnitAttr());
  if (getCarryState())
    facts.set("carry_state", b.getUnitAttr());
  if (deviceType != kDLCPU)
    facts.set("device_type", i64(deviceType));
  return facts.getDictionary(getContext());
}

FailureOr<attnc::KernelInterface>
LinearAttentionOp::interfaceFromEntry(Location loc, DictionaryAttr entry) {
  auto fail = [&]() { return entryError(loc, entry); };
  attnc::LinearFacts f;
  if (failed(readEntryInts(entry,
                           {{"num_heads", &f.heads},
                            {"num_kv_heads", &f.kvHeads},
                            {"head_dim", &f.headDim},
                            {"value_dim", &f.valueDim}},
                           fail)) ||
      failed(readLayoutAndDtype(entry, fail, f.layout, f.dtypeCode, f.dtypeBits)))
    return failure();
  f.causal = entry.contains("causal");
  f.carry = entry.contains("carry_state");
  return attnc::linearInterface(f);
}
