//===- FlashScheduleGpu.cpp - the Halide Flash pipeline's GPU schedule ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One GPU block per work item (query tile, head, batch), with a thread grid of
// laneThreads x block_q: a thread owns one query row and the head_dim lanes
// d = dt + laneThreads * n. The state (m, l, acc per lane and row) lives in
// shared memory: Halide sizes a register allocation at block level by the
// whole block's footprint, not one thread's. Per visited KV tile (the
// state's `rt` loop, at block level, every thread through it):
//   - the tile's keys, and values, staged in shared memory as far as they fit
//     next to the state (otherwise read through the caches);
//   - scores, then P, over (query row, key) in shared memory, the row max and
//     row sum per row;
//   - each thread's lanes of P V in registers, and of the state update.
// Halide inserts the barriers between the stages. The threads of every stage
// are the same grid, split so that no stage asks for more.
//
//===----------------------------------------------------------------------===//

#include "FlashAlgorithm.h"

#include <algorithm>

using namespace Halide;
using namespace attnc::halide;

namespace {

/// Threads per block the lanes are spread over (with block_q rows).
constexpr int kThreadsPerBlock = 256;
/// Shared memory a block may use: under the 48 KiB every CUDA device gives
/// without an opt-in (and PoCL's 64 KiB), with room for Halide's own.
constexpr int64_t kSharedBytes = 44 * 1024;

/// Spreads a stage's (x, y) over the thread grid (tx, ty): the thread
/// indices innermost, the rest serial loops in each thread.
void onThreads(Stage s, VarOrRVar x, VarOrRVar y, int tx, int ty) {
  VarOrRVar xo(x.name() + "_o", x.is_rvar), xi(x.name() + "_t", x.is_rvar);
  VarOrRVar yo(y.name() + "_o", y.is_rvar), yi(y.name() + "_t", y.is_rvar);
  s.split(x, xo, xi, tx, TailStrategy::GuardWithIf)
      .split(y, yo, yi, ty, TailStrategy::GuardWithIf)
      .reorder(xo, yo, xi, yi)
      .gpu_threads(xi, yi);
}

} // namespace

void attnc::halide::scheduleFlashGpu(const FlashProblem &p, FlashFuncs &f) {
  const int D = static_cast<int>(p.dim), BQ = static_cast<int>(p.blockQ);
  const int B = static_cast<int>(p.blockKv);
  const int laneThreads = std::clamp(kThreadsPerBlock / BQ, 1, D);
  Var d = f.d, i = f.i, j = f.j, head = f.headVar, batch = f.batchVar;
  Var qt("qt"), ii("ii"), dl("dl"), dt("dt");
  RVar rt = f.rt.x;

  // Lanes interleaved over the threads: neighbouring threads touch
  // neighbouring elements of out, of the staged values, of the state.
  f.out.split(i, qt, ii, BQ, TailStrategy::GuardWithIf)
      .split(d, dl, dt, laneThreads, TailStrategy::GuardWithIf)
      .reorder(dl, dt, ii, qt, head, batch)
      .gpu_blocks(qt, head, batch)
      .gpu_threads(dt, ii)
      .unroll(dl);

  // Carried across the KV tiles; each thread updates its own lanes.
  f.state.compute_at(f.out, qt)
      .store_in(MemoryType::GPUShared)
      .split(d, dl, dt, laneThreads, TailStrategy::GuardWithIf)
      .reorder(dl, dt, i)
      .gpu_threads(dt, i)
      .unroll(dl);
  f.state.update()
      .split(d, dl, dt, laneThreads, TailStrategy::GuardWithIf)
      .reorder(dl, dt, i, rt)
      .gpu_threads(dt, i)
      .unroll(dl);
  // P V for one lane of one row over the tile's keys, inside the update.
  f.probValues.compute_at(f.state, dl).store_in(MemoryType::Register);

  // Bytes: the state, the score and P tiles, then keys and values if they fit.
  int64_t used = 12 * int64_t(D) * BQ + 8 * int64_t(BQ) * B, tile = 4 * int64_t(D) * B;
  if (used > kSharedBytes) {
    // The hint must be one the user can follow: with the smallest tiles (8 x 8), does it fit?
    constexpr int64_t kMinTile = 8;
    bool smallerFits = 12 * int64_t(D) * kMinTile + 8 * kMinTile * kMinTile <= kSharedBytes;
    throw CompileError("the GPU schedule's state and score tiles need " +
                       std::to_string(used) + " bytes of shared memory, more than " +
                       std::to_string(kSharedBytes) +
                       (smallerFits ? "; use a smaller block_q or block_kv"
                                    : "; head_dim " + std::to_string(D) +
                                          " is past what this schedule holds even with the "
                                          "smallest tiles: compile it for a CPU target"));
  }
  int staged = 0;
  for (Func *input : {&f.keys, &f.valuesInPlace}) {
    if (used + tile > kSharedBytes)
      break;
    used += tile;
    ++staged;
    input->compute_at(f.state, rt).store_in(MemoryType::GPUShared);
    onThreads(*input, d, j, laneThreads, BQ);
  }
  f.gpuLaunch = std::to_string(laneThreads * BQ) + " threads per block, at most " +
                std::to_string(used) + " bytes of shared memory (" +
                (staged == 2   ? "keys and values staged"
                 : staged == 1 ? "keys staged, values read through the caches"
                               : "keys and values read through the caches") +
                ")";

  for (Func *tile : {&f.score, &f.prob}) {
    tile->compute_at(f.state, rt).store_in(MemoryType::GPUShared);
    onThreads(*tile, j, i, laneThreads, BQ);
  }
  // The dot products: each thread its keys of its row, over head_dim.
  VarOrRVar jo("j_o", false), jt("j_t", false), io("i_o", false), it("i_t", false);
  f.score.update()
      .split(j, jo, jt, laneThreads, TailStrategy::GuardWithIf)
      .split(i, io, it, BQ, TailStrategy::GuardWithIf)
      .reorder(f.rd.x, jo, io, jt, it)
      .gpu_threads(jt, it);

  for (Func *row : {&f.tileMax, &f.tileSum}) {
    row->compute_at(f.state, rt).store_in(MemoryType::GPUShared).gpu_threads(i);
    row->update().gpu_threads(i);
  }

  // The index check: a thread per row, over every key of the row.
  if (f.indexFailure.defined()) {
    f.indexFailure.split(i, qt, ii, kThreadsPerBlock, TailStrategy::GuardWithIf)
        .gpu_blocks(qt, head, batch)
        .gpu_threads(ii);
    f.indexFailure.update()
        .split(i, qt, ii, kThreadsPerBlock, TailStrategy::GuardWithIf)
        .reorder(f.rk.x, ii, qt, head, batch)
        .gpu_blocks(qt, head, batch)
        .gpu_threads(ii);
  }
}
