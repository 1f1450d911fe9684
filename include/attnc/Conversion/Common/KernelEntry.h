//===- KernelEntry.h - A kernel's host entry, for every backend -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host glue every backend shares. A lowering (MLIR CPU, Halide, CUDA)
// replaces each kernel by its tile or grid function and records the kernel's
// entry in the module attribute `attn.cpu_kernels` (its family op's
// describeEntry); attn-emit-cpu-entry then writes its descriptor (kernel
// interface v2, from the family's interfaceFromEntry) and its exported C
// function. The family op writes and reads the record, so the lowerings and
// the pass cannot disagree on it, and the pass knows no family.
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
/// its family's interface (attn-emit-cpu-entry sets each phase's onDevice
/// from the function it finds: a tile or a grid function).
struct KernelEntry {
  std::string name;
  int64_t deviceType = kDLCPU;
  attnc::KernelInterface interface;
};

/// The entry attn.cpu_kernels records (KernelFamilyOpInterface::describeEntry),
/// read back through the family of the registered op it names (an error on
/// `module` names what is missing or malformed).
FailureOr<KernelEntry> entryFromAttr(ModuleOp module, DictionaryAttr attr);

/// The function a kernel's lowering gives phase `phase` (its name; "" for
/// the first phase, whose function's name has none): `kind` "tile" (one work
/// item, on the host's threads) or "grid" (every item, on a device), as
/// <kernel>[_<phase>]_<kind>. attn-emit-cpu-entry calls its C interface,
/// cInterfaceName of it.
std::string phaseFunctionName(StringRef kernel, StringRef kind, StringRef phase = "");
/// MLIR's C-interface wrapper of `function`: _mlir_ciface_<function>.
std::string cInterfaceName(StringRef function);

/// The attn.flash of `kernel`, the op `backend` lowers for `target`;
/// otherwise an error on the body: an attn.attention wants attn-tile-flash
/// first, another family's op has no lowering in this backend; a decode
/// kernel (num_splits) where the backend does not build one (!buildsDecode).
FailureOr<FlashOp> flashToLower(KernelOp kernel, StringRef backend, StringRef target,
                                bool buildsDecode = false);

/// A private constant global `symbol` holding `text` and a terminating NUL.
LLVM::GlobalOp addStringGlobal(OpBuilder &b, Location loc, StringRef symbol, StringRef text);

/// The pointers `values` as an array on the stack (a thunk hands a kernel's
/// mod inputs to the runtime so); a null pointer for none.
Value stackArray(OpBuilder &b, Location loc, ValueRange values);

} // namespace mlir::attn

#endif // ATTNC_CONVERSION_COMMON_KERNELENTRY_H
