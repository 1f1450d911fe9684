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
//   - P V as blocks of 4 rows x 4 vectors of head_dim (6 x 2 with 16);
// then the state update on vectors of head_dim. Every intermediate has a
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
  const int pvRows = static_cast<int>(largestDivisorUpTo(p.blockQ, blocks.pvRows));
  const int pvLanes = static_cast<int>(blocks.pvVectors) * w;
  auto tail = TailStrategy::GuardWithIf; // head_dim need not be a multiple of w
  const int unroll = static_cast<int>(p.unroll ? p.unroll : reductionUnroll(w, registers));

  f.out.vectorize(d, w, tail);
  f.lse.vectorize(i, w, tail);
  // Rows padded to whole vectors (D + 2 lanes, FlashAlgorithm.cpp): rows of
  // 66 floats put every vector of acc across two cache lines.
  f.state.compute_root().store_in(MemoryType::Stack).align_storage(d, w).vectorize(d, w, tail);
  // Lanes read m and l (lanes D and D + 1), which the row's last vector
  // writes (FlashAlgorithm.cpp). Unrolled, the row's vectors read them at
  // known offsets before any store to them, so LLVM computes the rescale
  // factors once per row, not once per vector (where a store in the loop may
  // alias the read).
  f.state.update()
      .reorder(lane, i, rt)
      .allow_race_conditions()
      .vectorize(lane, w, tail)
      .unroll(lane);

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
  f.prob.compute_at(f.state, rt).store_in(MemoryType::Stack).vectorize(i, w);
  f.tileSum.compute_at(f.state, rt).store_in(MemoryType::Stack).vectorize(i, w);
  f.tileSum.update().reorder(i, f.rj.x).vectorize(i, w).unroll(i);

  // P V in blocks of pvRows rows x pvLanes of head_dim: each block's sums are a
  // register Func (zeroed in registers, accumulated over the tile's keys),
  // copied once into the tile's buffer, a wrapper the state reads.
  Func pv = f.probValues.in(f.state);
  pv.compute_at(f.state, rt)
      .store_in(MemoryType::Stack)
      .split(d, d, dd, pvLanes, tail)
      .split(i, io, ii, pvRows)
      .reorder(dd, ii, d, io)
      .vectorize(dd, w)
      .unroll(dd)
      .unroll(ii);
  f.probValues.compute_at(pv, d).store_in(MemoryType::Register);
  Stage valueSteps = f.probValues.update();
  reduceOver(valueSteps, {d, i}, f.rv.x, unroll);
  for (Stage stage : {Stage(f.probValues), valueSteps})
    stage.vectorize(d, w, tail).unroll(d).unroll(i);
}
