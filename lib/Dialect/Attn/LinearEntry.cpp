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
  int64_t layout = 0;
  if (failed(readEntryInts(entry,
                           {{"num_heads", &f.heads},
                            {"num_kv_heads", &f.kvHeads},
                            {"head_dim", &f.headDim},
                            {"value_dim", &f.valueDim},
                            {"layout", &layout}},
                           fail)))
    return failure();
  if (layout != 0 && layout != 1)
    return fail() << "'layout' is " << layout << ", neither bhsd (0) nor bshd (1)";
  auto dtype = dyn_cast_or_null<TypeAttr>(entry.get("dtype"));
  if (!dtype || !(dtype.getValue().isF32() || dtype.getValue().isF16() ||
                  dtype.getValue().isBF16()))
    return fail() << "no 'dtype' of f32, f16 or bf16 in attn.cpu_kernels";
  f.layout = int32_t(layout);
  f.dtypeCode = dtype.getValue().isBF16() ? kDLBfloat : kDLFloat;
  f.dtypeBits = int32_t(dtype.getValue().getIntOrFloatBitWidth());
  f.causal = entry.contains("causal");
  f.carry = entry.contains("carry_state");
  return attnc::linearInterface(f);
}
