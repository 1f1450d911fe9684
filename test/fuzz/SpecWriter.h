//===- SpecWriter.h - valid specs from a fuzzer's bytes ---------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_FUZZ_SPECWRITER_H
#define ATTNC_TEST_FUZZ_SPECWRITER_H

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>

namespace attnc::fuzz {

/// One kernel `@k` that verifies, chosen by `in`: 1-9 heads over 1-3 kv
/// heads, head_dim 1-80, f32 / f16 / bf16, both layouts, any mask kind and
/// and / or compositions two levels deep, an optional scale, out with or
/// without lse, score_mod / mask_mod bodies from a menu, and in one spec of
/// four num_splits 0-9 (a split-KV decode kernel: seq_q up to 16). Sets
/// `headDim`, and `decode` when it wrote num_splits.
std::string writeSpec(FuzzedDataProvider &in, int64_t &headDim, bool &decode);

} // namespace attnc::fuzz

#endif // ATTNC_TEST_FUZZ_SPECWRITER_H
