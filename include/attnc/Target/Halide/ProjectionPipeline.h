//===- ProjectionPipeline.h - attn.projection as a Halide pipeline -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A projection kernel (y = x W^T + bias, or x W + bias) on the Halide
// backend's CPU targets, as plain data like FlashPipeline.h. The pipeline
// computes one work item of the projection family (KernelInterface.h): a
// tile of at most kProjectionRows x kProjectionTile of y: the runtime's
// adapter (lib/Runtime/HalideProjection.cpp) hands it views of the item's
// rows of x, its columns of W and of the bias, and the item's rows of y,
// whole columns (64), at least kBlockRows rows (scratch for a last tile with
// fewer columns or rows). Rows and columns past the views of x, W and the
// bias are read clamped to their last one (results not stored). Its C
// signature:
//
//   int <name>_halide(halide_buffer_t *x,    // (k, row): [rows, in_features]
//                     halide_buffer_t *w,    // nn.Linear: (k, col); MatMul: (col, k)
//                     halide_buffer_t *bias, // (col); a zero at stride 0 without one
//                     halide_buffer_t *y)    // (col, row): [rows, 64]
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_HALIDE_PROJECTIONPIPELINE_H
#define ATTNC_TARGET_HALIDE_PROJECTIONPIPELINE_H

#include "attnc/Target/Halide/FlashPipeline.h"

namespace attnc::halide {

/// Rows of the pipeline's register blocks: the fewest rows of y it computes.
inline constexpr int64_t kProjectionBlockRows = 6;

/// One attn.projection kernel, as the Halide backend needs it.
struct ProjectionProblem {
  std::string name; // the kernel's symbol; the pipeline is <name>_halide
  int64_t in = 0;   // in_features: the reduction's length
  ElemType dtype = ElemType::f32;
  bool matmulWeights = false; // MatMul's [in, out] (weights = onnx), else nn.Linear's
};

/// Writes the pipeline's object file to `path` (`withRuntime` as for
/// compileFlashObject); "" or what went wrong. `source` must be "hand": the
/// autoschedulers are offered for attention kernels.
std::string compileProjectionObject(const ProjectionProblem &problem, const HalideTarget &target,
                                    const std::string &source, const std::string &path,
                                    bool withRuntime = true);

/// The pipeline's lowered statement (`attnc --emit=halide`), or an error
/// message in `error`.
std::string lowerProjectionStmt(const ProjectionProblem &problem, const HalideTarget &target,
                                const std::string &source, std::string &error);

} // namespace attnc::halide

#endif // ATTNC_TARGET_HALIDE_PROJECTIONPIPELINE_H
