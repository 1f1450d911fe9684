//===- Passes.h - attnc passes --------------------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_PASSES_H
#define ATTNC_TRANSFORMS_PASSES_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/TileSizes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {
#define GEN_PASS_DECL
#include "Attn/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_PASSES_H
