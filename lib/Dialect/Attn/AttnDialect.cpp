//===- AttnDialect.cpp - the attn dialect ---------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnDialect.h"
#include "attnc/Dialect/Attn/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "Attn/AttnDialect.cpp.inc"
#include "Attn/AttnEnums.cpp.inc"

void AttnDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "Attn/AttnOps.cpp.inc"
      >();
}
