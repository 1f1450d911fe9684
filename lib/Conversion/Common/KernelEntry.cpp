//===- KernelEntry.cpp - A kernel's entry, typed and as an attribute ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/KernelEntry.h"

#include "attnc/Support/MaskRules.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::attn;

KernelEntry mlir::attn::describeKernel(FlashOp op, StringRef name, int64_t deviceType) {
  KernelEntry e;
  e.name = name.str();
  e.deviceType = deviceType;
  attnc::AttentionFacts &f = e.facts;
  f.heads = op.getHeads();
  f.kvHeads = op.getKvHeads();
  f.headDim = op.getDim();
  f.blockQ = op.getTileQ();
  f.layout = static_cast<int32_t>(op.getLayout());
  // The C ABI always takes and fills `out` (an lse-only spec too): one
  // signature for every kernel, and out costs nothing extra to write.
  f.outputs = 1 | (op.hasOutput(OutputKind::lse) ? 2 : 0) |
              (op.hasOutput(OutputKind::weights) ? 4 : 0);
  Type dtype = op.getDtype();
  f.dtypeCode = dtype.isBF16() ? kDLBfloat : kDLFloat;
  f.dtypeBits = int32_t(dtype.getIntOrFloatBitWidth());
  std::optional<ArrayRef<int64_t>> maxSeq = op.getMaxSeq();
  // A block layout bounds the lengths too (0: unbounded).
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(op.getMask().toMaskRule());
  auto bound = [](int64_t given, int64_t c) {
    int64_t b = c == attnc::mask::kUnbounded ? 0 : c;
    return given > 0 && b > 0 ? std::min(given, b) : std::max(given, b);
  };
  f.maxSeqQ = bound(maxSeq ? (*maxSeq)[0] : 0, cover.q);
  f.maxSeqKv = bound(maxSeq ? (*maxSeq)[1] : 0, cover.kv);
  return e;
}

/// The dtype as the IR spells it, from DLPack's code and bits.
static Type dtypeOf(MLIRContext *ctx, const attnc::AttentionFacts &f) {
  Builder b(ctx);
  if (f.dtypeCode == kDLBfloat)
    return b.getBF16Type();
  return f.dtypeBits == 16 ? b.getF16Type() : b.getF32Type();
}

DictionaryAttr mlir::attn::entryToAttr(MLIRContext *ctx, const KernelEntry &e) {
  Builder b(ctx);
  const attnc::AttentionFacts &f = e.facts;
  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  NamedAttrList facts({
      b.getNamedAttr("name", b.getStringAttr(e.name)),
      b.getNamedAttr("num_heads", i64(f.heads)),
      b.getNamedAttr("num_kv_heads", i64(f.kvHeads)),
      b.getNamedAttr("head_dim", i64(f.headDim)),
      b.getNamedAttr("dtype", TypeAttr::get(dtypeOf(ctx, f))),
      b.getNamedAttr("layout", i64(f.layout)),
      b.getNamedAttr("outputs", i64(f.outputs)),
      b.getNamedAttr("block_q", i64(f.blockQ)),
      b.getNamedAttr("max_seq_q", i64(f.maxSeqQ)),
      b.getNamedAttr("max_seq_kv", i64(f.maxSeqKv)),
  });
  // Tile functions run on the runtime's CPU threads; a grid kernel states its device.
  if (e.deviceType != kDLCPU)
    facts.set("device_type", i64(e.deviceType));
  return facts.getDictionary(ctx);
}

FailureOr<KernelEntry> mlir::attn::entryFromAttr(ModuleOp module, DictionaryAttr info) {
  auto nameAttr = dyn_cast_or_null<StringAttr>(info.get("name"));
  if (!nameAttr)
    return module.emitError("attn-emit-cpu-entry: a kernel of attn.cpu_kernels has no string "
                            "'name': ")
           << info;
  KernelEntry e;
  e.name = nameAttr.str();
  auto fail = [&]() {
    return module.emitError("attn-emit-cpu-entry: kernel '") << e.name << "': ";
  };
  attnc::AttentionFacts &f = e.facts;
  int64_t layout = 0, outputs = 0;
  std::pair<StringRef, int64_t *> ints[] = {
      {"num_heads", &f.heads}, {"num_kv_heads", &f.kvHeads}, {"head_dim", &f.headDim},
      {"block_q", &f.blockQ},  {"max_seq_q", &f.maxSeqQ},   {"max_seq_kv", &f.maxSeqKv},
      {"layout", &layout},     {"outputs", &outputs}};
  for (auto [name, slot] : ints) {
    auto value = dyn_cast_or_null<IntegerAttr>(info.get(name));
    if (!value)
      return fail() << "no integer '" << name << "' in attn.cpu_kernels";
    *slot = value.getInt();
  }
  for (auto [name, value] : {std::pair<StringRef, int64_t>{"layout", layout}, {"outputs", outputs}})
    if (!llvm::isInt<32>(value))
      return fail() << "'" << name << "' is " << value << ", which does not fit int32";
  f.layout = int32_t(layout);
  f.outputs = int32_t(outputs);
  auto dtype = dyn_cast_or_null<TypeAttr>(info.get("dtype"));
  if (!dtype)
    return fail() << "no 'dtype' type in attn.cpu_kernels";
  Type type = dtype.getValue();
  if (!type.isF32() && !type.isF16() && !type.isBF16())
    return fail() << "dtype " << type << " has no DLPack spelling here; expected f32, f16 or bf16";
  f.dtypeCode = type.isBF16() ? kDLBfloat : kDLFloat;
  f.dtypeBits = int32_t(type.getIntOrFloatBitWidth());
  if (auto device = dyn_cast_or_null<IntegerAttr>(info.get("device_type")))
    e.deviceType = device.getInt();
  return e;
}

LLVM::GlobalOp mlir::attn::addStringGlobal(OpBuilder &b, Location loc, StringRef symbol,
                                           StringRef text) {
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size() + 1);
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
                                symbol, b.getStringAttr(text.str() + '\0'));
}
