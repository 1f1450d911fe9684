//===- ParallelKernels.h - compiling a spec's kernels on threads -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_PARALLELKERNELS_H
#define ATTNC_LIB_TARGET_PARALLELKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// Compiles one kernel: `single` is a module holding only the kernel of
/// index `index` (in spec order), with the spec module's attributes.
using KernelCompileFn = llvm::function_ref<llvm::Error(mlir::ModuleOp single, size_t index)>;

/// Calls `compileOne` for each kernel of `module` on `jobs` threads (0: one
/// per core, never more than kernels). Each thread has its own MLIR context
/// holding a copy of `module` (printed and parsed again, locations kept) and
/// its own diagnostics, which are printed afterwards kernel by kernel in
/// spec order; the error is that of the first kernel, in spec order, that
/// failed, so the output is the same as compiling one kernel after another.
/// With one job (or one kernel) everything runs on the calling thread, in
/// `module`'s context: what MLIR's debugging options need.
llvm::Error compileKernels(mlir::ModuleOp module, unsigned jobs, KernelCompileFn compileOne);

/// The threads compileKernels uses for `jobs` and `kernels`.
unsigned kernelCompileThreads(unsigned jobs, size_t kernels);

} // namespace attnc

#endif // ATTNC_LIB_TARGET_PARALLELKERNELS_H
