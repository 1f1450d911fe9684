//===- Npy.h - NumPy .npy files for HostTensor -----------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Reads and writes C-order .npy files (format 1.0 to 3.0). f32 is '<f4', f16
// '<f2'; NumPy has no bfloat16, so bf16 tensors are stored as their raw bits,
// '<u2' (view them with ml_dtypes.bfloat16, or shift into the top half of a
// float32). '<f8' files are accepted on input and rounded to the wanted type.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_NPY_H
#define ATTNC_REFERENCE_NPY_H

#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/Error.h"

namespace attnc {

/// Reads `path` as a tensor of storage type `type`.
llvm::Expected<HostTensor> readNpy(llvm::StringRef path, ElementType type);
llvm::Error writeNpy(llvm::StringRef path, const HostTensor &tensor);

} // namespace attnc

#endif // ATTNC_REFERENCE_NPY_H
