//===- attnc-opt.cpp - the attnc pass driver ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for attnc: runs any registered pass or pipeline on any stage. Used
// by the lit suite and by people reading the pipeline.
//
//===----------------------------------------------------------------------===//

#include "attnc/InitAll.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  attnc::registerAllDialects(registry);
  attnc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attnc pass driver\n", registry));
}
