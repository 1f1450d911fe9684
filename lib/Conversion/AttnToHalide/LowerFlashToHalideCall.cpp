//===- LowerFlashToHalideCall.cpp - attn-lower-flash-to-halide-call -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each attn.kernel becomes
//
//   llvm.func @_mlir_ciface_<name>_tile(q, k, v, out, lse, params: ptr,
//                                      b, h, q_tile: i64) -> i32 {
//     return attnc_rt_halide_tile(@<name>_halide, q, k, v, out, lse, params,
//                                 b, h, q_tile, block_q, head_dim, group,
//                                 element_bytes, dlpack_dtype_code)
//   }
//
// with @<name>_halide declared here and defined by the object Halide compiles
// from the same attn.flash (lib/Target/Halide).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERFLASHTOHALIDECALLPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kAdapter = "attnc_rt_halide_tile";

/// Declares `name` with `type` unless the module has it.
void declare(OpBuilder &b, ModuleOp module, StringRef name, LLVM::LLVMFunctionType type) {
  if (!SymbolTable::lookupSymbolIn(module, name))
    LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

void emitTileThunk(OpBuilder &b, ModuleOp module, FlashOp op, StringRef name) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i32 = b.getI32Type(), i64 = b.getI64Type();
  std::string pipeline = (name + "_halide").str();
  declare(b, module, pipeline,
          LLVM::LLVMFunctionType::get(i32, {ptr, ptr, ptr, i32, i32, i32, i32, i32, ptr, ptr}));
  SmallVector<Type> adapterArgs(7, ptr);
  adapterArgs.append(8, i64);
  auto adapterType = LLVM::LLVMFunctionType::get(i32, adapterArgs);
  declare(b, module, kAdapter, adapterType);

  SmallVector<Type> tileArgs(6, ptr);
  tileArgs.append(3, i64);
  auto tile = LLVM::LLVMFuncOp::create(b, loc, ("_mlir_ciface_" + name + "_tile").str(),
                                       LLVM::LLVMFunctionType::get(i32, tileArgs));
  OpBuilder::InsertionGuard guard(b);
  Block *body = tile.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, pipeline)};
  llvm::append_range(args, body->getArguments());
  Type elem = op.getDtype();
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  int64_t dtypeCode = elem.isBF16() ? kDLBfloat : kDLFloat;
  for (int64_t c : {op.getTileQ(), op.getDim(), op.getHeads() / op.getKvHeads(), elemBytes,
                    dtypeCode})
    args.push_back(LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(c)));
  auto call = LLVM::CallOp::create(b, loc, adapterType, kAdapter, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

struct AttnLowerFlashToHalideCallPass
    : public mlir::attn::impl::AttnLowerFlashToHalideCallPassBase<
          AttnLowerFlashToHalideCallPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Attribute> kernels;
    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      FlashOp op = kernel.getFlash();
      if (!op) {
        kernel.emitOpError("expects its tiled form, attn.flash; run attn-tile-flash first");
        return signalPassFailure();
      }
      emitTileThunk(b, module, op, kernel.getSymName());
      kernels.push_back(describeCpuKernel(op, kernel.getSymName()));
      kernel.erase();
    }
    module->setAttr("attn.cpu_kernels", ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
