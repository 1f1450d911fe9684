//===- InitAll.h - every dialect and pass attnc tools know ----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The one place registration happens; every tool calls these. Defined out of
// line (lib/Conversion/InitAll.cpp): the headers that declare every upstream
// conversion pass take 40 s to parse, once there instead of in every tool.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_INITALL_H
#define ATTNC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace attnc {

/// Dialects of every stage: attn (with arith and math inside score_mod /
/// mask_mod regions), then func / scf / memref / vector of the tiled and
/// loops stages (gpu / nvgpu / nvvm on CUDA), then LLVM.
void registerAllDialects(mlir::DialectRegistry &registry);

/// attnc's passes and pipelines, MLIR's generic passes (canonicalize, cse,
/// ...) and the upstream conversions the pipelines use.
void registerAllPasses();

} // namespace attnc

#endif // ATTNC_INITALL_H
