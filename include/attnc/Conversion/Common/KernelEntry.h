//===- KernelEntry.h - A kernel's host entry, for every backend -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host glue every backend shares. A lowering (MLIR CPU, Halide, CUDA)
// replaces each kernel by its tile or grid function and records the kernel's
// entry in the module attribute `attn.cpu_kernels`; attn-emit-cpu-entry
// then writes its descriptor (kernel interface v2, from the entry's facts)
// and its exported C function. The entry is typed here and only spelled as
// a dictionary in the IR, so the lowerings and the pass cannot disagree on
// it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_CONVERSION_COMMON_KERNELENTRY_H
#define ATTNC_CONVERSION_COMMON_KERNELENTRY_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Interface/KernelInterface.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::attn {

/// The module attribute listing the kernels whose entries attn-emit-cpu-entry writes.
inline constexpr llvm::StringLiteral kKernelEntriesAttr = "attn.cpu_kernels";

/// One kernel's entry: its exported symbol, the device of its tensors, and
/// the facts its family's interface is built from (attn-emit-cpu-entry sets
/// facts.onDevice from the function it finds: a tile or a grid function).
struct KernelEntry {
  std::string name;
  int64_t deviceType = kDLCPU;
  attnc::AttentionFacts facts;
};

/// The entry of `op`'s kernel `name`, whose tensors live on `deviceType`:
/// outputs (out always: the C ABI always takes and fills it), lengths
/// bounded by max_seq and by a block layout's cover.
KernelEntry describeKernel(FlashOp op, StringRef name, int64_t deviceType = kDLCPU);

/// `entry` as attn.cpu_kernels records it, and back (an error on `module`
/// names what is missing or malformed).
DictionaryAttr entryToAttr(MLIRContext *ctx, const KernelEntry &entry);
FailureOr<KernelEntry> entryFromAttr(ModuleOp module, DictionaryAttr attr);

/// A private constant global `symbol` holding `text` and a terminating NUL.
LLVM::GlobalOp addStringGlobal(OpBuilder &b, Location loc, StringRef symbol, StringRef text);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_COMMON_KERNELENTRY_H
