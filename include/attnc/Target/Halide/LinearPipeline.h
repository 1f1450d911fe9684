//===- LinearPipeline.h - attn.linear_attention as Halide pipelines -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A linear attention kernel on the Halide backend's CPU targets, as plain
// data like FlashPipeline.h. Its object holds two pipelines over at most
// kLinearRows rows, which the runtime's adapter (lib/Runtime/HalideLinear.cpp)
// calls per work item of the family (KernelInterface.h: linearInterface):
//
//   int <name>_halide_state(halide_buffer_t *k,      // (d, j): [rows, head_dim]
//                           halide_buffer_t *v,      // (e, j): [rows, value_dim]
//                           halide_buffer_t *s_in,   // (e, d) f32 [head_dim, value_dim]
//                           halide_buffer_t *z_in,   // (d) f32 [head_dim]
//                           halide_buffer_t *s_out,  // s_in + phi(k)^T v
//                           halide_buffer_t *z_out); // z_in + sum_j phi(k_j)
//
//   int <name>_halide(halide_buffer_t *q,            // (d, i): [rows, head_dim]
//                     halide_buffer_t *k,            // causal only: the rows' keys,
//                     halide_buffer_t *v,            //   and values
//                     halide_buffer_t *s,            // the state before the rows
//                     halide_buffer_t *z,
//                     halide_buffer_t *out);         // (e, i): [>= 4 rows, value_dim]
//
// The second computes out_i = Q_i S / (Q_i . z + eps) with Q = scale phi(q),
// and with `causal` S and z also take the rows' own keys j <= i (the masked
// product within a chunk); it computes at least kLinearBlockRows rows, reading
// q's last row again past its view. s_out may alias s_in, z_out z_in: each point
// reads its own input only.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_HALIDE_LINEARPIPELINE_H
#define ATTNC_TARGET_HALIDE_LINEARPIPELINE_H

#include "attnc/Target/Halide/FlashPipeline.h"

namespace attnc::halide {

/// The most keys the state pipeline folds in one call (the adapter's slices
/// of a non-causal kernel's keys; a causal one's chunks are at most 128).
inline constexpr int64_t kLinearStateRows = 256;

/// Rows of the rows pipeline's register blocks: the fewest rows of out it
/// computes (the adapter gives a shorter item scratch).
inline constexpr int64_t kLinearBlockRows = 4;

enum class FeatureMapKind { identity, elu1, relu };

/// One attn.linear_attention kernel, as the Halide backend needs it.
struct LinearProblem {
  std::string name; // the kernel's symbol; the pipelines are <name>_halide[_state]
  int64_t headDim = 1, valueDim = 1;
  ElemType dtype = ElemType::f32;
  FeatureMapKind featureMap = FeatureMapKind::identity;
  int64_t rows = 64; // the most rows of one call: a causal chunk, or block_q
  bool causal = false, normalize = true;
  double scale = 1, eps = 1e-6;
};

/// Writes both pipelines to one object file at `path` (`withRuntime` as for
/// compileFlashObject); "" or what went wrong. `source` must be "hand".
std::string compileLinearObject(const LinearProblem &problem, const HalideTarget &target,
                                const std::string &source, const std::string &path,
                                bool withRuntime = true);

/// Both pipelines' lowered statements (`attnc --emit=halide`), or an error
/// message in `error`.
std::string lowerLinearStmt(const LinearProblem &problem, const HalideTarget &target,
                            const std::string &source, std::string &error);

} // namespace attnc::halide

#endif // ATTNC_TARGET_HALIDE_LINEARPIPELINE_H
