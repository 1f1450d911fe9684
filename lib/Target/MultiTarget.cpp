//===- MultiTarget.cpp - one object, a code variant per target ------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `attnc --target=x86-64-avx512,x86-64-avx2,x86-64` compiles the spec once
// per target. Each variant's externally visible definitions get the target
// as a suffix (`causal_gqa.x86-64-avx2`), so the variants link side by side;
// a small dispatcher object, built for the baseline x86-64, exports each
// kernel's usual entry point, which hands its variant table (best first, as
// listed) to attnc_rt_dispatch, and its attnc_describe_ function, which
// returns the descriptor of the variant attnc_rt_select_variant picks. Like
// Halide's multi-target libraries, the header and the C ABI are those of a
// single-target object.
//
//===----------------------------------------------------------------------===//

#include "Emit.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/Support/FileUtilities.h"

using namespace attnc;

using namespace attnc::emit;

/// attnc_describe_<kernel>(): the descriptor of the variant
/// attnc_rt_select_variant picks from `table` (the dispatcher's), or NULL.
static void addDescribe(llvm::Module &m, llvm::StringRef kernel,
                        llvm::ArrayRef<CpuTarget> targets, llvm::GlobalVariable *table,
                        llvm::Constant *kernelName) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *ptr = b.getPtrTy();
  auto *describeType = llvm::FunctionType::get(ptr, false);
  std::string name = (llvm::Twine(ATTNC_DESCRIBE_PREFIX) + kernel).str();
  std::vector<llvm::Constant *> fns;
  for (const CpuTarget &t : targets)
    fns.push_back(llvm::Function::Create(describeType, llvm::GlobalValue::ExternalLinkage,
                                         variantName(name, t.name), m));
  auto *fnsType = llvm::ArrayType::get(ptr, fns.size());
  auto *fnTable = new llvm::GlobalVariable(m, fnsType, true, llvm::GlobalValue::PrivateLinkage,
                                           llvm::ConstantArray::get(fnsType, fns),
                                           kernel + ".describe");
  llvm::FunctionCallee select = m.getOrInsertFunction(
      "attnc_rt_select_variant", llvm::FunctionType::get(ptr, {ptr, b.getInt32Ty(), ptr}, false));
  llvm::Function *fn =
      llvm::Function::Create(describeType, llvm::GlobalValue::ExternalLinkage, name, m);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *none = llvm::BasicBlock::Create(ctx, "none", fn);
  auto *pick = llvm::BasicBlock::Create(ctx, "pick", fn);
  b.SetInsertPoint(entry);
  llvm::Value *chosen = b.CreateCall(select, {table, b.getInt32(fns.size()), kernelName});
  b.CreateCondBr(b.CreateIsNull(chosen), none, pick);
  b.SetInsertPoint(none);
  b.CreateRet(llvm::ConstantPointerNull::get(ptr));
  b.SetInsertPoint(pick);
  llvm::Value *i = b.CreatePtrDiff(table->getValueType()->getArrayElementType(), chosen, table);
  llvm::Value *at = b.CreateGEP(fnsType, fnTable, {b.getInt64(0), i});
  llvm::Value *describe = b.CreateLoad(ptr, at);
  llvm::CallInst *call = b.CreateCall(describeType, describe);
  call->setTailCall();
  b.CreateRet(call);
}

/// @kernel(q, k, v, out, lse, opt) = attnc_rt_dispatch(variants, n, "kernel", ...).
static void addDispatcher(llvm::Module &m, llvm::StringRef kernel,
                          llvm::ArrayRef<CpuTarget> targets) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *ptr = b.getPtrTy();
  auto *i32 = b.getInt32Ty();
  auto *i64 = b.getInt64Ty();
  auto *entryType = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr}, false);
  auto *variantType = llvm::StructType::get(ctx, {ptr, i64, ptr});
  std::vector<llvm::Constant *> rows;
  for (const CpuTarget &t : targets) {
    auto *name = b.CreateGlobalString(t.name, (kernel + ".target." + t.name).str(), 0, &m);
    llvm::Function *variant = llvm::Function::Create(
        entryType, llvm::GlobalValue::ExternalLinkage, variantName(kernel, t.name), m);
    rows.push_back(llvm::ConstantStruct::get(
        variantType, {name, llvm::ConstantInt::get(i64, t.cpuNeeds), variant}));
  }
  auto *tableType = llvm::ArrayType::get(variantType, rows.size());
  auto *table = new llvm::GlobalVariable(m, tableType, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(tableType, rows),
                                         kernel + ".variants");
  auto *kernelName = b.CreateGlobalString(kernel, (kernel + ".name").str(), 0, &m);
  auto *dispatchType = llvm::FunctionType::get(
      i32, {ptr, i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr}, false);
  llvm::FunctionCallee dispatch = m.getOrInsertFunction("attnc_rt_dispatch", dispatchType);

  llvm::Function *entry =
      llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage, kernel, m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value *> args{table, b.getInt32(rows.size()), kernelName};
  for (llvm::Argument &a : entry->args())
    args.push_back(&a);
  llvm::CallInst *call = b.CreateCall(dispatch, args);
  call->setTailCall();
  b.CreateRet(call);
  addDescribe(m, kernel, targets, table, kernelName);
}

/// The object exporting each kernel's entry point, dispatching over the
/// suffixed variants of `targets` (best first).
static llvm::Error writeDispatcher(llvm::ArrayRef<std::string> kernels,
                                   llvm::ArrayRef<CpuTarget> targets, llvm::StringRef path) {
  llvm::LLVMContext ctx;
  llvm::Module m("attnc-dispatch", ctx);
  for (const std::string &kernel : kernels)
    addDispatcher(m, kernel, targets);
  llvm::Expected<CpuTarget> baseline = lookupCpuTarget("x86-64");
  if (!baseline)
    return baseline.takeError();
  std::string message;
  auto out = mlir::openOutputFile(path, &message);
  if (!out)
    return error(message);
  if (llvm::Error err = emitMachineCode(m, *baseline, false, out->os()))
    return err;
  out->keep();
  return llvm::Error::success();
}

llvm::Error attnc::compileMultiTarget(mlir::ModuleOp module, llvm::ArrayRef<Selection> variants,
                                      EmitStage stage, const CompileOutput &output) {
  if (stage != EmitStage::obj && stage != EmitStage::so)
    return error("--emit=obj and --emit=so take several targets; the other stages show one "
                 "target's code: give one --target");
  std::vector<CpuTarget> cpus;
  for (const Selection &variant : variants) {
    const std::string &target = variant.targetName();
    if (!variant.cpu.isX86())
      return error("multi-target objects pick their variant by cpuid: x86-64 targets only, "
                   "not " + target);
    if (variant.backend != "mlir" || !variant.gpuTarget.empty())
      return error("multi-target objects are built by the mlir backend for CPU targets; "
                   "--backend=" + variant.backend + " --target=" + target +
                   " takes one target");
    if (llvm::any_of(cpus, [&](const CpuTarget &c) { return c.name == target; }))
      return error("--target lists " + target + " twice");
    cpus.push_back(variant.cpu);
  }
  std::vector<std::string> kernels;
  for (mlir::attn::KernelOp kernel : module.getOps<mlir::attn::KernelOp>()) {
    // The dispatcher forwards attention's five tensors (attnc_rt_dispatch).
    if (!kernel.getSpec())
      return error("kernel '" + kernel.getSymName() + "' is a " +
                   kernel.getCompute().getFamily() + " kernel, whose entry is not attention's; "
                   "multi-target objects dispatch attention kernels: give one --target");
    if (kernel.getSpec().hasOutput(mlir::attn::OutputKind::weights))
      return error("kernel '" + kernel.getSymName() + "' outputs weights, whose entry takes "
                   "six tensors; multi-target objects dispatch five: give one --target");
    kernels.push_back(kernel.getSymName().str());
  }
  mlir::OwningOpRef<mlir::ModuleOp> spec = module.clone();
  auto writeObject = [&](llvm::StringRef objPath) -> llvm::Error {
    ObjectParts parts;
    // A variant's kernels compile as a single target's do: on the threads,
    // sharing tile functions within the variant.
    for (const Selection &variant : variants) {
      mlir::OwningOpRef<mlir::ModuleOp> code = module.clone();
      llvm::Expected<std::string> path = parts.add();
      if (!path)
        return path.takeError();
      if (llvm::Error err =
              writeKernelwiseObject(*code, variant, output.jobs, *path, variant.cpu.name))
        return err;
    }
    llvm::Expected<std::string> path = parts.add();
    if (!path)
      return path.takeError();
    if (llvm::Error err = writeDispatcher(kernels, cpus, *path))
      return err;
    return parts.merge(objPath, cpus.front().triple);
  };
  return writeOutputs(writeObject, *spec, variants.front(), stage, output);
}
