//===- FuzzContext.h - the MLIRContext a fuzzer keeps across inputs -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_FUZZ_FUZZCONTEXT_H
#define ATTNC_TEST_FUZZ_FUZZCONTEXT_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/InitAll.h"
#include "attnc/Target/Registry.h"
#include "attnc/Tools/NestingLimit.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

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

/// `text` parsed and verified as the tools do (refused first when it nests too deep); null
/// when it is not a valid module.
inline mlir::OwningOpRef<mlir::ModuleOp> parseSpec(llvm::StringRef text,
                                                   mlir::MLIRContext &ctx) {
  if (findExcessNesting(text) != llvm::StringRef::npos)
    return nullptr;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"),
                               llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &ctx);
}

/// Erases every attn.kernel after the first `n`: the pipeline's time is linear in the kernels,
/// which a mutated multi-kernel spec repeats, and a 30 s budget per input is for finding
/// hangs, not for lowering the same kernel twenty times under ASan.
inline void keepFirstKernels(mlir::ModuleOp module, int n) {
  for (mlir::Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (mlir::isa<mlir::attn::KernelOp>(op) && n-- <= 0)
      op.erase();
}

/// The module's tiled form as `attnc --emit=tiled` prints it, parsed again: a form users
/// can feed back to every tool. Null when the pipeline refuses the module.
inline mlir::OwningOpRef<mlir::ModuleOp> tiledForm(mlir::ModuleOp module) {
  mlir::OwningOpRef<mlir::ModuleOp> tiled = module.clone();
  mlir::PassManager pm(module->getContext());
  buildPipeline(pm, llvm::cantFail(select("mlir", "x86-64-avx2", {})), PipelineStage::tiled);
  if (mlir::failed(pm.run(*tiled)))
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  tiled->print(os);
  return parseSpec(text, *module->getContext());
}

} // namespace attnc::fuzz

#endif // ATTNC_TEST_FUZZ_FUZZCONTEXT_H
