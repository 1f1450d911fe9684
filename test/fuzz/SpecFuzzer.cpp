//===- SpecFuzzer.cpp - libFuzzer target: spec text through the compiler -===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Arbitrary bytes as a spec: the nesting check, MLIR's parser, the attn
// verifier, then for a spec that verifies the mlir backend's pipeline for
// x86-64-avx2 down to the LLVM dialect (normalize, tile, lower the tile
// function, the LLVM conversion, the C entries) and the tiles explain would
// count. A spec that verifies is also taken to its tiled form (attnc
// --emit=tiled), printed, parsed again and compiled the same way: every form
// the verifier accepts, not only the ones users write (the first four kernels
// of a spec: see keepFirstKernels). Any input may be rejected with a
// diagnostic; none may crash, hang, leak or touch memory it does not own
// (ASan, UBSan). Machine code is not generated: LLVM's back end is not ours to
// fuzz, and it is slow.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Transforms/TileClassifier.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>

namespace {

/// The tile counts explain prints, for a small grid (the classifier's
/// arithmetic on the spec's own mask).
void countTiles(mlir::ModuleOp module) {
  module.walk([](mlir::attn::AttentionOp op) {
    for (int64_t seq : {1, 37, 130})
      (void)mlir::attn::countKeptPairs(op.getMask(), seq, seq + 3);
  });
}

/// The tiles explain counts, then the pipeline down to the LLVM dialect.
void lower(mlir::ModuleOp module) {
  countTiles(module);
  mlir::PassManager pm(module->getContext());
  attnc::buildPipeline(pm, llvm::cantFail(attnc::select("mlir", "x86-64-avx2", {})),
                       attnc::PipelineStage::llvmDialect);
  (void)pm.run(module);
}

} // namespace

/// LLVM's BumpPtrAllocator poisons its slabs in code built with ASan (this
/// target's inlined copies) and not in the uninstrumented libMLIR, which then
/// writes to memory our copy poisoned: a false report. Manual poisoning off.
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Diagnostics are the expected outcome of most inputs: dropped.
  mlir::MLIRContext &ctx = attnc::fuzz::context(/*dropDiagnostics=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> module = attnc::fuzz::parseSpec(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), ctx);
  if (!module)
    return 0;
  attnc::fuzz::keepFirstKernels(*module, 4);
  mlir::OwningOpRef<mlir::ModuleOp> tiled = attnc::fuzz::tiledForm(*module);
  lower(*module);
  if (tiled)
    lower(*tiled);
  return 0;
}
