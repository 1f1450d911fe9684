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
// on a CPU target, or on a GPU target (the whole tensors in one call)
//
//   llvm.func @_mlir_ciface_<name>_grid(q, k, v, out, lse, params: ptr,
//                                      batch, device_id: i64, stream: ptr) -> i32 {
//     return attnc_rt_halide_grid(@<name>_halide, interface, q, k, v, out, lse,
//                                 params, batch, device_id, stream, heads,
//                                 kv_heads, head_dim, element_bytes,
//                                 dlpack_dtype_code, outputs_lse)
//   }
//
// where interface is halide_cuda_device_interface() (cuda) or null (opencl:
// host tensors), with @<name>_halide declared here and defined by the object
// Halide compiles from the same attn.flash (lib/Target/Halide).
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/KernelEntry.h"
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
constexpr StringLiteral kGridAdapter = "attnc_rt_halide_grid";
constexpr StringLiteral kCudaInterface = "halide_cuda_device_interface";

/// Declares `name` with `type` unless the module has it.
void declare(OpBuilder &b, ModuleOp module, StringRef name, LLVM::LLVMFunctionType type) {
  if (!SymbolTable::lookupSymbolIn(module, name))
    LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// The constants every adapter takes after its own arguments.
void appendConstants(OpBuilder &b, Location loc, ArrayRef<int64_t> values,
                     SmallVectorImpl<Value> &args) {
  for (int64_t c : values)
    args.push_back(LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(c)));
}

std::pair<int64_t, int64_t> elementFacts(FlashOp op) {
  Type elem = op.getDtype();
  return {elem.getIntOrFloatBitWidth() / 8, elem.isBF16() ? kDLBfloat : kDLFloat};
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
  auto tile = LLVM::LLVMFuncOp::create(b, loc, cInterfaceName(phaseFunctionName(name, "tile")),
                                       LLVM::LLVMFunctionType::get(i32, tileArgs));
  OpBuilder::InsertionGuard guard(b);
  Block *body = tile.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, pipeline)};
  llvm::append_range(args, body->getArguments());
  auto [elemBytes, dtypeCode] = elementFacts(op);
  appendConstants(b, loc,
                  {op.getTileQ(), op.getDim(), op.getHeads() / op.getKvHeads(), elemBytes,
                   dtypeCode},
                  args);
  auto call = LLVM::CallOp::create(b, loc, adapterType, kAdapter, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

void emitGridThunk(OpBuilder &b, ModuleOp module, FlashOp op, StringRef name, bool cuda) {
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext()), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  bool lse = op.hasOutput(OutputKind::lse);
  std::string pipeline = (name + "_halide").str();
  declare(b, module, pipeline,
          LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(lse ? 6 : 5, ptr)));
  SmallVector<Type> adapterArgs(8, ptr);
  adapterArgs.append({i64, i64, ptr});
  adapterArgs.append(6, i64);
  auto adapterType = LLVM::LLVMFunctionType::get(i32, adapterArgs);
  declare(b, module, kGridAdapter, adapterType);
  auto interfaceType = LLVM::LLVMFunctionType::get(ptr, {});
  if (cuda)
    declare(b, module, kCudaInterface, interfaceType);

  SmallVector<Type> gridArgs(6, ptr);
  gridArgs.append({i64, i64, ptr});
  auto grid = LLVM::LLVMFuncOp::create(b, loc, cInterfaceName(phaseFunctionName(name, "grid")),
                                       LLVM::LLVMFunctionType::get(i32, gridArgs));
  OpBuilder::InsertionGuard guard(b);
  Block *body = grid.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  Value interface = cuda ? LLVM::CallOp::create(b, loc, interfaceType, kCudaInterface,
                                                ValueRange{})
                               .getResult()
                         : LLVM::ZeroOp::create(b, loc, ptr).getResult();
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, pipeline), interface};
  llvm::append_range(args, body->getArguments());
  auto [elemBytes, dtypeCode] = elementFacts(op);
  appendConstants(b, loc,
                  {op.getHeads(), op.getKvHeads(), op.getDim(), elemBytes, dtypeCode, lse},
                  args);
  auto call = LLVM::CallOp::create(b, loc, adapterType, kGridAdapter, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

struct AttnLowerFlashToHalideCallPass
    : public mlir::attn::impl::AttnLowerFlashToHalideCallPassBase<
          AttnLowerFlashToHalideCallPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (device != "cpu" && device != "cuda" && device != "opencl") {
      module.emitError("attn-lower-flash-to-halide-call: device '")
          << device << "' is none of cpu, cuda and opencl";
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Attribute> kernels;
    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      FailureOr<FlashOp> flash = flashToLower(kernel, "Halide", device);
      if (failed(flash))
        return signalPassFailure();
      FlashOp op = *flash;
      std::optional<int64_t> deviceType; // a tile function runs on the CPU
      if (device == "cpu") {
        emitTileThunk(b, module, op, kernel.getSymName());
      } else {
        emitGridThunk(b, module, op, kernel.getSymName(), device == "cuda");
        deviceType = device == "cuda" ? kDLCUDA : kDLCPU;
      }
      kernels.push_back(op.describeEntry(kernel.getSymName(), deviceType.value_or(kDLCPU)));
      kernel.erase();
    }
    module->setAttr(kKernelEntriesAttr, ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
