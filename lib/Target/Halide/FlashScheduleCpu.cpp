//===- FlashScheduleCpu.cpp - the Halide Flash pipeline's CPU schedule ----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One work item runs on one thread (the runtime parallelises over items), so
// nothing here is parallel. Per visited KV tile (the state's `rt` loop):
//   - scores as register blocks of 4 vectors of query rows x 4 keys (3 x 4
//     with 16 registers), accumulated over head_dim (query rows along the
//     lanes: the queries are stored transposed, once per item), `unroll`
//     steps of head_dim per loop iteration (P V likewise over keys);
//   - the row max, P and the row sum on vectors of rows;
//   - (P V)^T in blocks of the same shape, 4 vectors of rows x 4 values of
//     head_dim (3 x 4 with 16);
// then the state update on vectors of rows: every per-tile quantity has its
// rows along the lanes, and the output is transposed back once per item (the
// state update on vectors of head_dim took one scalar exp per row and tile:
// 1.06x at head_dim 64, 1.13x at 128 on AVX2). Every intermediate has a
// constant size and lives on the stack (heap allocations per tile cost the
// prototype 15-20%, HALIDE-FLASH-NOTES.md).
//
//===----------------------------------------------------------------------===//

#include "FlashAlgorithm.h"
#include "attnc/Support/RegisterBlocks.h"

using namespace Halide;
using namespace attnc::halide;

/// Orders `stage`'s loops: `block` innermost (the register block), then the
/// reduction `r`, `unroll` of its steps per iteration of its loop (unrolled
/// between the block and the loop). Where the step count is known only at run
/// time (P V: the tile's keys inside seq_kv), Halide guards the steps past it,
/// one compare per `unroll` steps.
static Stage &reduceOver(Stage &stage, const std::vector<VarOrRVar> &block, RVar r,
                         int unroll) {
  std::vector<VarOrRVar> order = block;
  if (unroll > 1) {
    RVar step(r.name() + "_step");
    stage.split(r, r, step, unroll).unroll(step);
    order.push_back(step);
  }
  order.push_back(r);
  return stage.reorder(order);
}

void attnc::halide::scheduleFlashCpu(const FlashProblem &p, int w, int registers,
                                     FlashFuncs &f) {
  Var d = f.d, i = f.i, j = f.j, io("io"), ii("ii"), ji("ji"), dd("dd");
  RVar lane = f.rt.x, rt = f.rt.y;
  // The MLIR backend's blocks, capped to the tile as there.
  const RegisterBlocks blocks = registerBlocks(registers);
  const int rowBlock = w * static_cast<int>(largestDivisorUpTo(p.blockQ / w, blocks.qkRowVectors));
  const int keyBlock = static_cast<int>(blocks.qkKeys);
  const int dBlock = static_cast<int>(largestDivisorUpTo(p.dim, blocks.qkKeys));
  auto tail = TailStrategy::GuardWithIf; // head_dim need not be a multiple of w
  const int unroll = static_cast<int>(p.unroll ? p.unroll : reductionUnroll(w, registers));

  // The output reads the state across its rows (once per item).
  f.out.vectorize(d, w, tail);
  f.lse.vectorize(i, w, tail);
  // O^T: the state keeps rows along the lanes, as Q^T, S^T and P do, so the
  // update works on vectors of rows: the rescale factors are one vector exp
  // per w rows (per row, they were a scalar exp each). Lanes in order within
  // each vector of rows, unrolled: every acc lane reads m and l at known
  // offsets before lanes D and D + 1 are written, so LLVM computes the factors
  // once (FlashAlgorithm.cpp).
  f.state.compute_root().store_in(MemoryType::Stack).reorder_storage(i, d).vectorize(i, w);
  f.state.update().split(i, io, ii, w).reorder(ii, lane, io, rt).vectorize(ii).unroll(lane);

  // Q^T: rows along the lanes.
  f.queries.compute_root().store_in(MemoryType::Stack).reorder_storage(i, d);

  f.masked.compute_at(f.state, rt)
      .store_in(MemoryType::Stack)
      .tile(i, j, ii, ji, rowBlock, keyBlock, TailStrategy::RoundUp)
      .vectorize(ii, w)
      .unroll(ii)
      .unroll(ji);
  f.score.compute_at(f.masked, i)
      .store_in(MemoryType::Register)
      .vectorize(i, w)
      .unroll(i)
      .unroll(j);
  Stage scoreSteps = f.score.update();
  // head_dim is known here: unrolled only where no step needs a guard.
  reduceOver(scoreSteps, {i, j}, f.rd.x, p.dim % unroll == 0 ? unroll : 1)
      .vectorize(i, w)
      .unroll(i)
      .unroll(j);

  f.tileMax.compute_at(f.state, rt).store_in(MemoryType::Stack).vectorize(i, w);
  // Unrolled over the row vectors, the running max and sum stay in registers
  // across the keys (rolled, each key loaded and stored them).
  f.tileMax.update().reorder(i, f.rj.x).vectorize(i, w).unroll(i);
  // P a Q K^T block of rows at a time: their max and its test stay in
  // registers across the keys.
  f.prob.compute_at(f.state, rt)
      .store_in(MemoryType::Stack)
      .split(i, io, ii, rowBlock)
      .vectorize(ii, w)
      .unroll(ii);
  f.tileSum.compute_at(f.state, rt).store_in(MemoryType::Stack).vectorize(i, w);
  f.tileSum.update().reorder(i, f.rj.x).vectorize(i, w).unroll(i);

  // P V as (P V)^T, the shape of Q K^T: blocks of rowBlock rows (vectors of
  // P's rows) x dBlock values of head_dim (broadcast from v), summed in a
  // register Func over the tile's keys and copied once into the tile's
  // buffer, a wrapper the state reads along its rows.
  Func pv = f.probValues.in(f.state);
  pv.compute_at(f.state, rt)
      .store_in(MemoryType::Stack)
      .reorder_storage(i, d)
      .split(i, io, ii, rowBlock)
      .split(d, d, dd, dBlock)
      .reorder(ii, dd, io, d)
      .vectorize(ii, w)
      .unroll(ii)
      .unroll(dd);
  f.probValues.compute_at(pv, io).store_in(MemoryType::Register).reorder_storage(i, d);
  Stage valueSteps = f.probValues.update();
  reduceOver(valueSteps, {i, d}, f.rv.x, unroll);
  for (Stage stage : {Stage(f.probValues), valueSteps})
    stage.vectorize(i, w).unroll(i).unroll(d);
}
