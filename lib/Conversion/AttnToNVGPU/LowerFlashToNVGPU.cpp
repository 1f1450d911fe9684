//===- LowerFlashToNVGPU.cpp - attn-lower-flash-to-nvgpu ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each attn.kernel @<name> becomes
//
//   gpu.module @<name>_gpu { gpu.func @<name>(...) kernel { ... } }
//   llvm.mlir.global private constant @<name>_image  (the cubin; empty until
//                                                     attn-embed-gpu-binary)
//   llvm.func @_mlir_ciface_<name>_grid(q, k, v, out, lse, inputs...,
//                                      params: ptr, batch, device_id: i64,
//                                      stream: ptr) -> i32 {
//     return attnc_rt_cuda_launch(@<name>_image, "<name>", q, k, v, out, lse,
//                                 params, batch, device_id, stream, heads,
//                                 element_bytes, block_q, threads, shared_bytes,
//                                 [inputs...], input_count)
//   }
//
// where the mod inputs (a spec's `inputs`) go as an array of their views
// on the stack (null, 0 without any).
//
// (cuda-sm90a: attnc_rt_cuda_launch_tma, which also takes kv_heads,
// head_dim and block_kv to build the kernel's tensor maps), the grid
// function of attnc_runtime.h, so attn-emit-cpu-entry gives it the
// same descriptor and C entry as every other kernel (device_type kDLCUDA).
//
// A split-KV decode kernel (num_splits) has two phases: gpu.func @<name>
// and @<name>_merge (FlashMmaDecode.cpp) in the one gpu.module, and grid
// functions _mlir_ciface_<name>_grid and _mlir_ciface_<name>_merge_grid,
// each calling attnc_rt_cuda_launch_views with every view (arguments, then
// the scratch partials) and its kernel's grid and launch.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Conversion/AttnToNVGPU/FlashMmaKernel.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERFLASHTONVGPUPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// @<name>_image, the placeholder the kernel's cubin replaces
/// (attn-embed-gpu-binary); returns its name.
std::string addImagePlaceholder(OpBuilder &b, Location loc, StringRef name) {
  std::string image = (name + "_image").str();
  auto placeholder = LLVM::GlobalOp::create(b, loc, LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                                            /*isConstant=*/true, LLVM::Linkage::Private, image,
                                            b.getStringAttr(""));
  placeholder.setAlignment(64);
  return image;
}

void emitGridFunction(OpBuilder &b, ModuleOp module, FlashOp op, const attnc::CudaTarget &target,
                      StringRef name) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i32 = b.getI32Type(), i64 = b.getI64Type();
  std::string image = addImagePlaceholder(b, loc, name);
  std::string function = (name + "_cuda_function").str();
  addStringGlobal(b, loc, function, name);

  MmaKernelShape shape = MmaKernelShape::of(op, target);
  bool tma = target.mma == MmaKind::wgmma;
  // heads, then kv_heads, head_dim, block_kv (TMA) or the element size,
  // then block_q, threads, shared bytes.
  SmallVector<int64_t> facts{op.getHeads()};
  if (tma)
    facts.append({op.getKvHeads(), op.getDim(), shape.blockKv});
  else
    facts.push_back(shape.elemBytes);
  facts.append({shape.blockQ, shape.threads, shape.sharedBytes});
  StringRef launcher = tma ? "attnc_rt_cuda_launch_tma" : "attnc_rt_cuda_launch";
  SmallVector<Type> launcherArgs(8, ptr);
  launcherArgs.append({i64, i64, ptr});
  launcherArgs.append(facts.size(), i64);
  launcherArgs.append({ptr, i64});
  auto launcherType = LLVM::LLVMFunctionType::get(i32, launcherArgs);
  if (!SymbolTable::lookupSymbolIn(module, launcher))
    LLVM::LLVMFuncOp::create(b, loc, launcher, launcherType);

  size_t inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  SmallVector<Type> gridArgs(6 + inputs, ptr);
  gridArgs.append({i64, i64, ptr});
  auto grid = LLVM::LLVMFuncOp::create(b, loc, cInterfaceName(phaseFunctionName(name, "grid")),
                                       LLVM::LLVMFunctionType::get(i32, gridArgs));
  OpBuilder::InsertionGuard guard(b);
  Block *body = grid.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, image),
                          LLVM::AddressOfOp::create(b, loc, ptr, function)};
  ValueRange views = body->getArguments();
  llvm::append_range(args, views.take_front(5));
  llvm::append_range(args, views.drop_front(5 + inputs)); // params, batch, device, stream
  for (int64_t fact : facts)
    args.push_back(LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(fact)));
  args.push_back(stackArray(b, loc, views.slice(5, inputs)));
  args.push_back(LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(inputs)));
  auto call = LLVM::CallOp::create(b, loc, launcherType, launcher, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

/// The grid function of each phase of a split-KV decode kernel
/// (_mlir_ciface_<name>_grid, then _<name>_merge_grid), each handing every
/// view to attnc_rt_cuda_launch_views with its kernel's grid and launch.
void emitDecodeGridFunctions(OpBuilder &b, ModuleOp module, FlashOp op,
                             const attnc::CudaTarget &target, StringRef name) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i32 = b.getI32Type(), i64 = b.getI64Type();
  std::string image = addImagePlaceholder(b, loc, name);
  StringRef launcher = "attnc_rt_cuda_launch_views";
  SmallVector<Type> launcherArgs{ptr, ptr, ptr, i64, ptr, i64, ptr};
  launcherArgs.append(9, i64);
  auto launcherType = LLVM::LLVMFunctionType::get(i32, launcherArgs);
  if (!SymbolTable::lookupSymbolIn(module, launcher))
    LLVM::LLVMFuncOp::create(b, loc, launcher, launcherType);

  MmaKernelShape shape = MmaKernelShape::of(op, target);
  FailureOr<attnc::KernelInterface> in =
      FlashOp::interfaceFromEntry(loc, op.describeEntry(name, kDLCUDA));
  int64_t views = in->numViews(), inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  int64_t firstInput = decodeFirstInput(op);
  int64_t splits = decodeSplitCount(*op.getNumSplits());
  for (bool merge : {false, true}) {
    std::string function = merge ? (name + "_merge").str() : name.str();
    addStringGlobal(b, loc, function + "_cuda_function", function);
    SmallVector<Type> gridArgs(views, ptr);
    gridArgs.append({ptr, i64, i64, ptr});
    std::string grid = cInterfaceName(phaseFunctionName(name, "grid", merge ? "merge" : ""));
    auto fn = LLVM::LLVMFuncOp::create(b, loc, grid, LLVM::LLVMFunctionType::get(i32, gridArgs));
    OpBuilder::InsertionGuard guard(b);
    Block *body = fn.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    auto constant = [&](int64_t v) -> Value {
      return LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(v));
    };
    ValueRange args = body->getArguments();
    Value params = args[views], batch = args[views + 1];
    // The attention phase: CTA (split, KV head, batch); the merge: (head, batch).
    SmallVector<Value> gridDims =
        merge ? SmallVector<Value>{constant(op.getHeads()), batch, constant(1)}
              : SmallVector<Value>{constant(splits), constant(op.getKvHeads()), batch};
    SmallVector<Value> call{LLVM::AddressOfOp::create(b, loc, ptr, image),
                            LLVM::AddressOfOp::create(b, loc, ptr, function + "_cuda_function"),
                            stackArray(b, loc, args.take_front(views)), constant(views),
                            params, args[views + 2], args[views + 3]};
    call.append(gridDims);
    call.append({constant(merge ? decodeMergeThreads() : shape.threads),
                 constant(merge ? 0 : shape.sharedBytes), constant(shape.elemBytes),
                 constant(merge ? 0 : 3), constant(firstInput), constant(inputs)});
    auto result = LLVM::CallOp::create(b, loc, launcherType, launcher, call);
    LLVM::ReturnOp::create(b, loc, result.getResult());
  }
}

struct AttnLowerFlashToNVGPUPass
    : public mlir::attn::impl::AttnLowerFlashToNVGPUPassBase<AttnLowerFlashToNVGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    const attnc::CudaTarget *cuda = attnc::lookupMlirCudaTarget(target);
    if (!cuda) {
      std::string names;
      for (const attnc::CudaTarget &t : attnc::mlirCudaTargets())
        names += (names.empty() ? "" : " or ") + t.name.str();
      module.emitError("attn-lower-flash-to-nvgpu: unknown target '")
          << target << "'; expected " << names;
      return signalPassFailure();
    }
    SmallVector<Attribute> kernels;
    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      FailureOr<FlashOp> flash = flashToLower(kernel, "MLIR CUDA", target, /*buildsDecode=*/true);
      if (failed(flash))
        return signalPassFailure();
      FlashOp op = *flash;
      if (std::string misfit = mmaKernelMisfit(op, *cuda); !misfit.empty()) {
        op.emitOpError("cannot become a ") << target << " tensor-core kernel: " << misfit;
        return signalPassFailure();
      }
      StringRef name = kernel.getSymName();
      auto gpuModule = gpu::GPUModuleOp::create(b, op.getLoc(), (name + "_gpu").str());
      gpu::GPUFuncOp func = op.getNumSplits()
                                ? buildMmaDecodeKernels(op, *cuda, gpuModule, name).first
                                : buildMmaFlashKernel(op, *cuda, gpuModule, name);
      // For --emit=ptx's header: what the launch asks for.
      func->setAttr("attn.dynamic_shared_bytes",
                    b.getI64IntegerAttr(MmaKernelShape::of(op, *cuda).sharedBytes));
      if (op.getNumSplits())
        emitDecodeGridFunctions(b, module, op, *cuda, name);
      else
        emitGridFunction(b, module, op, *cuda, name);
      kernels.push_back(op.describeEntry(name, kDLCUDA));
      kernel.erase();
    }
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), b.getUnitAttr());
    module->setAttr(kKernelEntriesAttr, ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
