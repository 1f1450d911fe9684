//===- EntryFacts.cpp - the facts attention families' entries share -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "EntryFacts.h"

#include "attnc/Support/MaskRules.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::attn;

NamedAttrList mlir::attn::commonEntryFacts(AttentionSpecOpInterface op, StringRef name,
                                           int64_t blockQ) {
  Builder b(op->getContext());
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq();
  // A block layout bounds the lengths too (0: unbounded).
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(op.getMask().toMaskRule());
  auto bound = [](int64_t given, int64_t c) {
    int64_t b = c == attnc::mask::kUnbounded ? 0 : c;
    return given > 0 && b > 0 ? std::min(given, b) : std::max(given, b);
  };
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(name)),
      b.getNamedAttr("op", b.getStringAttr(op->getName().getStringRef())),
      b.getNamedAttr("num_heads", i64(op.getHeads())),
      b.getNamedAttr("num_kv_heads", i64(op.getKvHeads())),
      b.getNamedAttr("head_dim", i64(op.getDim())),
      b.getNamedAttr("dtype", TypeAttr::get(op.getDtype())),
      b.getNamedAttr("layout", i64(static_cast<int64_t>(op.getLayout()))),
      b.getNamedAttr("block_q", i64(blockQ)),
      b.getNamedAttr("max_seq_q", i64(bound(maxSeq ? (*maxSeq)[0] : 0, cover.q))),
      b.getNamedAttr("max_seq_kv", i64(bound(maxSeq ? (*maxSeq)[1] : 0, cover.kv))),
  });
  if (ArrayAttr inputs = op.getInputsAttr())
    facts.set("inputs", inputs);
  return facts;
}

InFlightDiagnostic mlir::attn::entryError(Location loc, DictionaryAttr entry) {
  InFlightDiagnostic d = mlir::emitError(loc, "attn-emit-cpu-entry: kernel '");
  if (auto name = dyn_cast_or_null<StringAttr>(entry.get("name")))
    d << name.getValue();
  return std::move(d << "': ");
}

LogicalResult mlir::attn::readEntryInts(DictionaryAttr entry,
                                        ArrayRef<std::pair<StringRef, int64_t *>> ints,
                                        EntryError fail) {
  for (auto [name, slot] : ints) {
    auto value = dyn_cast_or_null<IntegerAttr>(entry.get(name));
    if (!value)
      return fail() << "no integer '" << name << "' in attn.cpu_kernels";
    *slot = value.getInt();
  }
  return success();
}

LogicalResult mlir::attn::readLayoutAndDtype(DictionaryAttr entry, EntryError fail,
                                             int32_t &layout, int32_t &dtypeCode,
                                             int32_t &dtypeBits) {
  int64_t given = 0;
  if (failed(readEntryInts(entry, {{"layout", &given}}, fail)))
    return failure();
  if (given != 0 && given != 1)
    return fail() << "'layout' is " << given << ", neither bhsd (0) nor bshd (1)";
  layout = int32_t(given);
  auto dtype = dyn_cast_or_null<TypeAttr>(entry.get("dtype"));
  if (!dtype)
    return fail() << "no 'dtype' type in attn.cpu_kernels";
  Type type = dtype.getValue();
  if (!type.isF32() && !type.isF16() && !type.isBF16())
    return fail() << "dtype " << type << " has no DLPack spelling here; expected f32, f16 or bf16";
  dtypeCode = type.isBF16() ? kDLBfloat : kDLFloat;
  dtypeBits = int32_t(type.getIntOrFloatBitWidth());
  return success();
}

LogicalResult mlir::attn::readCommonEntry(DictionaryAttr entry, EntryError fail,
                                          attnc::AttentionFacts &f) {
  if (failed(readEntryInts(entry,
                           {{"num_heads", &f.heads},
                            {"num_kv_heads", &f.kvHeads},
                            {"head_dim", &f.headDim},
                            {"block_q", &f.blockQ},
                            {"max_seq_q", &f.maxSeqQ},
                            {"max_seq_kv", &f.maxSeqKv}},
                           fail)) ||
      failed(readLayoutAndDtype(entry, fail, f.layout, f.dtypeCode, f.dtypeBits)))
    return failure();
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
  return success();
}
