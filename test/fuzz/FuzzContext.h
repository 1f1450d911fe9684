//===- FuzzContext.h - the MLIRContext a fuzzer keeps across inputs -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_FUZZ_FUZZCONTEXT_H
#define ATTNC_TEST_FUZZ_FUZZCONTEXT_H

#include "attnc/InitAll.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

namespace attnc::fuzz {

/// One context for the whole run (creating one per input would dominate the
/// run time), single-threaded, every attnc dialect loaded, never destroyed.
/// `dropDiagnostics`: for inputs whose diagnostics are the expected outcome.
inline mlir::MLIRContext &context(bool dropDiagnostics) {
  static mlir::MLIRContext *ctx = [dropDiagnostics] {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    auto *c = new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    c->loadAllAvailableDialects();
    if (dropDiagnostics)
      c->getDiagEngine().registerHandler([](mlir::Diagnostic &) {});
    return c;
  }();
  return *ctx;
}

} // namespace attnc::fuzz

#endif // ATTNC_TEST_FUZZ_FUZZCONTEXT_H
