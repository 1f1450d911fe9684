//===- ParallelKernels.cpp - compiling a spec's kernels on threads --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Kernels are independent from the spec onwards, and LLVM's -O3 and code
// generation take nearly all of a kernel's compile time, one module at a
// time. So each thread gets an MLIR context of its own (a context's dialect
// and translation registries are not for concurrent mutation, and passes
// register into them), a copy of the spec parsed from its printed form, and
// claims kernels from a shared counter; each kernel's LLVM module has its own
// LLVMContext already. Memory stays linear: one kernel in flight per thread.
//
//===----------------------------------------------------------------------===//

#include "ParallelKernels.h"

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Tools/SpecFile.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <thread>

using namespace mlir;

namespace {

/// A module holding `kernel` alone, with `spec`'s attributes.
OwningOpRef<ModuleOp> singleKernel(ModuleOp spec, Operation *kernel) {
  OwningOpRef<ModuleOp> single = ModuleOp::create(spec.getLoc());
  (*single)->setAttrs(spec->getAttrDictionary());
  single->getBody()->push_back(kernel->clone());
  return single;
}

/// What compiling one kernel left: its error (as text; "" when its
/// diagnostics say it all) and the diagnostics printed meanwhile.
struct KernelResult {
  bool failed = false;
  std::string error, diagnostics;
};

/// One thread: its own context and copy of the spec; compiles the kernels it
/// claims until none are left or one (any) failed.
void worker(llvm::StringRef specText, std::atomic<size_t> &next,
            std::vector<KernelResult> &results, std::atomic<bool> &stop,
            attnc::KernelCompileFn compileOne) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  // Diagnostics print against the spec file itself, which the handler opens
  // by the name in their locations, as the main context's does.
  attnc::SpecFile file(os, /*threading=*/false);
  OwningOpRef<ModuleOp> spec = file.parseString(specText);
  std::vector<Operation *> kernels;
  if (spec)
    for (attn::KernelOp kernel : spec->getOps<attn::KernelOp>())
      kernels.push_back(kernel);
  for (size_t i; !stop && (i = next++) < results.size();) {
    KernelResult &result = results[i];
    llvm::Error err = kernels.size() == results.size()
                          ? compileOne(*singleKernel(*spec, kernels[i]), i)
                          : llvm::createStringError("cannot parse the spec's printed form");
    result.failed = bool(err);
    result.error = llvm::toString(std::move(err));
    result.diagnostics = std::move(diagnostics);
    diagnostics.clear();
    stop = stop || result.failed;
  }
}

} // namespace

unsigned attnc::kernelCompileThreads(unsigned jobs, size_t kernels) {
  unsigned threads = jobs ? jobs : std::max(1u, std::thread::hardware_concurrency());
  return unsigned(std::min<size_t>(threads, std::max<size_t>(kernels, 1)));
}

llvm::Error attnc::compileKernels(ModuleOp module, unsigned jobs, KernelCompileFn compileOne) {
  std::vector<Operation *> kernels;
  for (attn::KernelOp kernel : module.getOps<attn::KernelOp>())
    kernels.push_back(kernel);
  unsigned threads = kernelCompileThreads(jobs, kernels.size());
  if (threads <= 1) {
    for (size_t i = 0; i < kernels.size(); ++i)
      if (llvm::Error err = compileOne(*singleKernel(module, kernels[i]), i))
        return err;
    return llvm::Error::success();
  }
  std::string specText;
  llvm::raw_string_ostream os(specText);
  module->print(os, OpPrintingFlags().enableDebugInfo());
  std::vector<KernelResult> results(kernels.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(worker, llvm::StringRef(specText), std::ref(next), std::ref(results),
                      std::ref(stop), compileOne);
  for (std::thread &t : pool)
    t.join();
  // Kernels are claimed in order, so every kernel before the first failure
  // was compiled: print as a serial compile would have, up to that failure.
  for (KernelResult &result : results) {
    llvm::errs() << result.diagnostics;
    if (result.failed)
      return llvm::createStringError(result.error);
  }
  return llvm::Error::success();
}
