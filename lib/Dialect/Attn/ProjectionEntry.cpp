//===- ProjectionEntry.cpp - attn.projection as a kernel family -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The projection family's side of KernelFamilyOpInterface: the facts its
// entry records and its kernel interface from them
// (attnc::projectionInterface).
//
//===----------------------------------------------------------------------===//

#include "EntryFacts.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

StringRef ProjectionOp::getFamily() { return "projection"; }

DictionaryAttr ProjectionOp::describeEntry(StringRef name, int64_t deviceType) {
  Builder b(getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("op", b.getStringAttr(getOperationName())),
      b.getNamedAttr("in_features", i64(getIn())),
      b.getNamedAttr("out_features", i64(getOut())),
      b.getNamedAttr("dtype", TypeAttr::get(getDtype())),
      b.getNamedAttr("layout", i64(0)),
  });
  if (isOnnx())
    facts.set("onnx_weights", b.getUnitAttr());
  if (deviceType != kDLCPU)
    facts.set("device_type", i64(deviceType));
  return facts.getDictionary(getContext());
}

FailureOr<attnc::KernelInterface> ProjectionOp::interfaceFromEntry(Location loc,
                                                                  DictionaryAttr entry) {
  auto fail = [&]() { return entryError(loc, entry); };
  attnc::ProjectionFacts f;
  int32_t layout = 0;
  if (failed(readEntryInts(entry, {{"in_features", &f.in}, {"out_features", &f.out}}, fail)) ||
      failed(readLayoutAndDtype(entry, fail, layout, f.dtypeCode, f.dtypeBits)))
    return failure();
  f.onnx = entry.contains("onnx_weights");
  return attnc::projectionInterface(f);
}
