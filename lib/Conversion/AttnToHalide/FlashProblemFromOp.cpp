//===- FlashProblemFromOp.cpp - attn.flash as the Halide backend's input --===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToHalide/FlashProblemFromOp.h"
#include "attnc/Conversion/Common/KernelEntry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::attn;

static std::string typeName(Type type) {
  std::string name;
  llvm::raw_string_ostream os(name);
  type.print(os);
  return name;
}

/// The body as plain data: the verifier allows only scalar arith / math ops
/// and attn.load with one result (isModRegionOp), so names, types, operands
/// and a load's input say it all.
static attnc::halide::ModBody modBody(Block &block) {
  attnc::halide::ModBody body;
  llvm::DenseMap<Value, int> index;
  for (BlockArgument arg : block.getArguments()) {
    index[arg] = static_cast<int>(index.size());
    body.argTypes.push_back(typeName(arg.getType()));
  }
  for (Operation &op : block.without_terminator()) {
    attnc::halide::ModOp m;
    m.name = op.getName().getStringRef().str();
    m.type = typeName(op.getResult(0).getType());
    for (Value operand : op.getOperands())
      m.operands.push_back(index.lookup(operand));
    if (auto load = dyn_cast<LoadOp>(op))
      m.input = load.getInput().str();
    if (auto cmp = dyn_cast<arith::CmpFOp>(op))
      m.predicate = arith::stringifyCmpFPredicate(cmp.getPredicate()).str();
    if (auto cmp = dyn_cast<arith::CmpIOp>(op))
      m.predicate = arith::stringifyCmpIPredicate(cmp.getPredicate()).str();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (auto f = dyn_cast<FloatAttr>(constant.getValue()))
        m.floatValue = f.getValueAsDouble();
      else
        m.intValue = cast<IntegerAttr>(constant.getValue()).getValue().getSExtValue();
    }
    index[op.getResult(0)] = static_cast<int>(index.size());
    body.ops.push_back(std::move(m));
  }
  body.result = index.lookup(block.getTerminator()->getOperand(0));
  return body;
}

FailureOr<attnc::halide::FlashProblem> mlir::attn::flashProblemFromOp(KernelOp kernel,
                                                                       StringRef target) {
  FailureOr<FlashOp> flash = flashToLower(kernel, "Halide", target);
  if (failed(flash))
    return failure();
  FlashOp op = *flash;
  if (op.hasOutput(OutputKind::weights))
    return op.emitOpError("outputs 'weights', which the Halide backend does not compute; "
                          "the MLIR CPU backend does (--backend=mlir on a CPU target)");
  attnc::halide::FlashProblem p;
  p.name = kernel.getSymName().str();
  p.dim = op.getDim();
  Type elem = op.getDtype();
  if (elem.isF32())
    p.dtype = attnc::halide::ElemType::f32;
  else if (elem.isF16())
    p.dtype = attnc::halide::ElemType::f16;
  else if (elem.isBF16())
    p.dtype = attnc::halide::ElemType::bf16;
  else
    return op.emitOpError("the Halide backend supports dtypes f32, f16 and bf16, got ") << elem;
  p.blockQ = op.getTileQ();
  p.blockKv = op.getTileKv();
  p.group = op.getHeads() / op.getKvHeads();
  p.lse = op.hasOutput(OutputKind::lse);
  p.scale = op.getScaleOrDefault();
  p.mask = cast<MaskAttrInterface>(op.getMask()).toMaskRule();
  if (ArrayAttr inputs = op.getInputsAttr()) {
    // They follow the outputs, out and lse (the Halide backend has no weights).
    int arg = 5;
    for (auto decl : inputs.getAsRange<ModInputAttr>())
      p.inputs.push_back({decl.getName().str(), decl.getElementType().isInteger(),
                          int(decl.getDims().size()), arg++});
  }
  if (!op.getScoreMod().empty())
    p.scoreMod = modBody(op.getScoreMod().front());
  if (!op.getMaskMod().empty())
    p.maskMod = modBody(op.getMaskMod().front());
  return p;
}
