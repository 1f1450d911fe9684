//===- ScheduleFit.cpp - schedules not worth compiling --------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The checks attnc-tune applies before compiling a candidate, from the target
// description: what would spill registers or overflow the cache is pruned
// with its reason counted, instead of costing a compile and a measurement.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/Registry.h"
#include "attnc/Transforms/TileSizes.h"

#include "llvm/Support/FormatVariadic.h"

using namespace attnc;

/// The MLIR lowering's register blocks: accumulators, the vectors loaded per
/// step and one broadcast must fit the architectural vector registers.
static std::string registerMisfit(const Selection &s) {
  const CpuTarget &t = s.cpu;
  struct Block {
    const char *phase, *across, *along;
    int64_t outer, vectors;
  } blocks[] = {{"Q K^T", "keys", "row vectors", s.schedule.getOr("qk_keys", t.qkKeys()),
                 s.schedule.getOr("qk_row_vectors", t.qkRowVectors())},
                {"P V", "rows", "vectors", s.schedule.getOr("pv_rows", t.pvRows()),
                 s.schedule.getOr("pv_vectors", t.pvVectors())}};
  for (const Block &b : blocks) {
    int64_t needed = b.outer * b.vectors + b.vectors + 1;
    if (needed > t.vectorRegisters)
      return llvm::formatv("registers: the {0} block ({1} {2} x {3} {4}) needs {5} vector "
                           "registers, {6} has {7}",
                           b.phase, b.outer, b.across, b.vectors, b.along, needed, t.name,
                           t.vectorRegisters);
  }
  return "";
}

std::string attnc::scheduleMisfit(const Selection &s, int64_t headDim) {
  if (!s.gpuTarget.empty())
    return ""; // the GPU schedule checks its shared memory when it compiles
  if (s.backend == "mlir") {
    std::string registers = registerMisfit(s);
    if (!registers.empty())
      return registers;
  }
  // Per work item and KV tile: K and V tiles, the query tile, its output
  // accumulator and the score tile, in f32.
  int64_t blockQ = resolvedBlockQ(s, headDim);
  int64_t blockKv = s.schedule.get("block_kv");
  int64_t bytes = 4 * (2 * blockKv * headDim + 2 * blockQ * headDim + blockQ * blockKv);
  if (bytes > s.cpu.l2Bytes)
    return llvm::formatv("cache: block_q {0} x block_kv {1} at head_dim {2} works on {3} KiB "
                         "per tile, beyond the {4} KiB L2 {5} assumes",
                         blockQ, blockKv, headDim, bytes / 1024, s.cpu.l2Bytes / 1024,
                         s.cpu.name);
  return "";
}
