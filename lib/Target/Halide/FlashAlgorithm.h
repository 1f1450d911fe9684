//===- FlashAlgorithm.h - the Halide Flash algorithm's Funcs -----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Algorithm and schedule apart, in Halide's generator style: defineFlash
// states what is computed, scheduleFlashCpu how. The Funcs are named after the
// quantities of attn.flash's recurrence (see FlashAlgorithm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_HALIDE_FLASHALGORITHM_H
#define ATTNC_LIB_TARGET_HALIDE_FLASHALGORITHM_H

#include "Halide.h"
#include "attnc/Target/Halide/FlashPipeline.h"

namespace attnc::halide {

struct FlashFuncs {
  Halide::ImageParam q, k, v;
  Halide::Param<int32_t> batch{"b"}, head{"h"}; // what the mods see
  Halide::Param<int32_t> q0{"q0"}, seqQ{"seq_q"}, seqKv{"seq_kv"};
  Halide::Var d{"d"}, i{"i"}, j{"j"}, t{"t"};
  // head_dim, keys of a tile, the tile's keys inside seq_kv, (lane, visited tile)
  Halide::RDom rd, rj, rv, rt;
  // f32; the queries scaled.
  Halide::Func queries{"queries"}, keys{"keys"}, valuesInPlace{"values"};
  Halide::Func score{"score"}, masked{"masked"}, tileMax{"tile_max"}, prob{"prob"};
  Halide::Func tileSum{"tile_sum"}, probValues{"prob_values"};
  // (m, l, acc) over (d, i), updated per visited tile.
  Halide::Func state{"state"};
  Halide::Func out{"out"}, lse{"lse"};

  /// The pipeline's arguments in the C signature's order (FlashPipeline.h).
  std::vector<Halide::Argument> arguments() const;
  Halide::Pipeline pipeline() const { return Halide::Pipeline({out, lse}); }
};

/// The algorithm of one work item (query tile) of `problem`.
void defineFlash(const FlashProblem &problem, FlashFuncs &f);

/// The CPU schedule: per KV tile, scores as register blocks of keys x query
/// rows, P V as rows x head_dim vectors, all intermediates on the stack.
void scheduleFlashCpu(const FlashProblem &problem, int vectorWidth, FlashFuncs &f);

} // namespace attnc::halide

#endif // ATTNC_LIB_TARGET_HALIDE_FLASHALGORITHM_H
