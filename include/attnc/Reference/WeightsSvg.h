//===- WeightsSvg.h - attention weights as SVG heat maps -------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_WEIGHTSSVG_H
#define ATTNC_REFERENCE_WEIGHTSSVG_H

#include "attnc/Reference/HostTensor.h"
#include "llvm/Support/raw_ostream.h"

namespace attnc {

/// Largest seq_q * seq_kv drawn; a picture of more cells is unreadable anyway.
inline constexpr int64_t kMaxSvgCells = 256 * 256;

/// Draws batch 0 of `weights` ([batch, heads, seq_q, seq_kv]) as one heat map
/// per head: query index down, key index across, one colour scale for all
/// heads (0 to the largest weight), masked entries (weight 0) in grey.
void writeWeightsSvg(const HostTensor &weights, llvm::StringRef title,
                     llvm::raw_ostream &os);

} // namespace attnc

#endif // ATTNC_REFERENCE_WEIGHTSSVG_H
