//===- attnc-opt.cpp - the attnc pass driver ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for attnc: runs any registered pass or pipeline on any stage, and
// attnc's own (--attnc-pipeline="target=... until=..."). Used by the lit
// suite and by people reading or bisecting the pipeline.
//
//===----------------------------------------------------------------------===//

#include "attnc/InitAll.h"
#include "attnc/Target/Registry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/thread.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  attnc::registerAllPasses();
  attnc::registerAttncPipeline();
  // MLIR's parser recurses per nested attribute; attnc and attnc-run refuse
  // deep specs before parsing (NestingLimit.h), while this developer tool,
  // which takes any MLIR, parses on a thread with a 1 GiB stack (reserved,
  // not committed): #attn.and nested 100,000 deep parses instead of crashing.
  int rc = 1;
  llvm::thread worker(std::optional<unsigned>(1u << 30), [&] {
    rc = mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, "attnc pass driver\n", registry));
  });
  worker.join();
  return rc;
}
