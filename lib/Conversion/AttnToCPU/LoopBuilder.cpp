//===- LoopBuilder.cpp - the CPU kernels' shared builders -----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "LoopBuilder.h"

#include "attnc/Conversion/Common/KernelEntry.h"

using namespace mlir;
using namespace mlir::attn;

func::FuncOp mlir::attn::cpu::createTileFunction(ImplicitLocOpBuilder &b, KernelOp kernel,
                                                 ArrayRef<Type> args, StringRef phase,
                                                 int64_t rank) {
  SmallVector<Type> types(args);
  types.append(rank, b.getIndexType());
  std::string name = phaseFunctionName(kernel.getSymName(), "tile", phase);
  auto func = func::FuncOp::create(
      b, name, FunctionType::get(b.getContext(), types, {b.getI32Type()}));
  func->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return func;
}
