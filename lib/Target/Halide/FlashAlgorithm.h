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

#include <functional>

namespace attnc::halide {

/// The two shapes of the pipeline. An item pipeline computes one work item (a
/// query tile of one batch and head; the CPU runtime's threads run the items):
/// 2-d q, k, v, out (d, row) and Params for the rest. A grid pipeline computes
/// the whole tensors at once (the GPU schedules' blocks are the items): 4-d
/// (d, row, head, batch), whatever their strides, lse (row, head, batch), and
/// every Func has two more arguments (head, batch) after its own.
enum class FlashShape { item, grid };

struct FlashFuncs {
  FlashShape shape = FlashShape::item;
  Halide::ImageParam q, k, v;
  std::vector<Halide::ImageParam> inputs; // the mods', whole
  Halide::Param<int32_t> batch{"b"}, head{"h"}; // what the mods see (item)
  Halide::Param<int32_t> q0{"q0"}, seqQ{"seq_q"}, seqKv{"seq_kv"};
  // i: a query row (of the item, or of the sequence in a grid pipeline).
  Halide::Var d{"d"}, i{"i"}, j{"j"}, t{"t"};
  Halide::Var headVar{"head"}, batchVar{"batch"}; // grid only
  // head_dim, keys of a tile, the tile's keys inside seq_kv, visited tiles
  // ((lane, tile) in an item pipeline, see FlashAlgorithm.cpp)
  Halide::RDom rd, rj, rv, rt, rk;
  // f32; the queries scaled.
  Halide::Func queries{"queries"}, keys{"keys"}, valuesInPlace{"values"};
  Halide::Func score{"score"}, masked{"masked"}, tileMax{"tile_max"}, prob{"prob"};
  Halide::Func tileSum{"tile_sum"}, probValues{"prob_values"};
  // (m, l, acc), updated per visited tile: a Tuple over (d, i) in a grid
  // pipeline, one float over (lane, i) in an item pipeline (acc in lanes
  // [0, D), l in D, m in D + 1).
  Halide::Func state{"state"};
  Halide::Func out{"out"}, lse{"lse"};
  // A grid pipeline with mod inputs: per (row, head, batch), the argument
  // of an input a mod loaded outside of, or 0 (FlashAlgorithm.cpp).
  Halide::Func indexFailure{"index_failure"};
  /// What the GPU schedule chose: threads per block and the most shared
  /// memory a block uses (Halide sizes it at launch, at most this), in words.
  std::string gpuLaunch;

  /// The pipeline's arguments in the C signature's order (FlashPipeline.h).
  std::vector<Halide::Argument> arguments() const;
  /// Item: out and lse. Grid: out alone, a Tuple (out, lse) when the kernel
  /// outputs lse; then indexFailure when the mods read inputs.
  Halide::Pipeline pipeline() const {
    if (shape == FlashShape::item)
      return Halide::Pipeline({out, lse});
    return indexFailure.defined() ? Halide::Pipeline({out, indexFailure}) : Halide::Pipeline(out);
  }
};

/// The algorithm of `problem` in the given shape.
void defineFlash(const FlashProblem &problem, FlashShape shape, FlashFuncs &f);

/// The CPU schedule: per KV tile, scores as register blocks of keys x query
/// rows, P V as rows x head_dim vectors (sized to `vectorRegisters`), all
/// intermediates on the stack.
void scheduleFlashCpu(const FlashProblem &problem, int vectorWidth, int vectorRegisters,
                      FlashFuncs &f);

/// A tensor element type as Halide's type.
Halide::Type halideType(ElemType type);

/// Runs `body` (which defines, schedules and compiles a pipeline) with attnc's
/// reporter of Halide's errors and warnings installed: "" or the error's
/// text, naming the schedule source.
std::string runHalide(const std::string &source, const std::function<void()> &body);

/// Throws CompileError unless `target` is a CPU target and `source` the hand
/// schedule: what the CPU-only families (`op`) are built for.
void requireCpuHandSchedule(const char *op, const HalideTarget &target,
                            const std::string &source);

/// The GPU schedule of a grid pipeline: one block per (query tile, head,
/// batch), per KV tile the tile's keys and values staged in shared memory,
/// scores and P in shared memory, the state in registers.
void scheduleFlashGpu(const FlashProblem &problem, FlashFuncs &f);

} // namespace attnc::halide

#endif // ATTNC_LIB_TARGET_HALIDE_FLASHALGORITHM_H
