//===- AttnOps.h - operations of the attn dialect -------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_DIALECT_ATTN_ATTNOPS_H
#define ATTNC_DIALECT_ATTN_ATTNOPS_H

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Interface/KernelInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cmath>

#include "Attn/AttnOpInterfaces.h.inc"

#define GET_OP_CLASSES
#include "Attn/AttnOps.h.inc"

namespace mlir::attn {
/// The scalar arith / math ops a score_mod or mask_mod body may use. Every
/// backend and the reference interpreter implement exactly this set.
bool isModRegionOp(Operation *op);
} // namespace mlir::attn

#endif // ATTNC_DIALECT_ATTN_ATTNOPS_H
