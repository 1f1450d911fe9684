//===- ScheduleText.cpp - a selection's schedule in words -----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `attnc explain`'s schedule lines: how a kernel's work is laid out on the
// selection's target (CTAs and shared memory on a CUDA target, work items
// and vector registers on a CPU) and what its automatic tunables resolve to.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToNVGPU/FlashMmaKernel.h"
#include "attnc/Target/Registry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace attnc;

void attnc::describeSchedule(const Selection &s, int64_t blockQ, int64_t blockKv, int64_t dim,
                             int64_t elemBytes, int64_t workItems, llvm::StringRef itemsOf,
                             llvm::raw_ostream &os, bool decode) {
  const CpuTarget &cpu = s.cpu;
  const CudaTarget *target = s.backend == "mlir" ? lookupMlirCudaTarget(s.gpuTarget) : nullptr;
  if (target) {
    CudaTarget cuda = decode ? mlir::attn::decodeCudaTarget(*target) : *target;
    auto shape = mlir::attn::MmaKernelShape::of(cuda, blockQ, blockKv, dim, elemBytes);
    os << llvm::formatv("schedule: mlir backend, {0} ({6} tensor cores): block_q {1}, "
                        "block_kv {2}; {3} CTAs ({9}) of {4} threads, {5} bytes of dynamic "
                        "shared memory each (at most {7}), up to {8} registers a thread\n",
                        cuda.name, blockQ, blockKv, workItems, shape.threads, shape.sharedBytes,
                        cuda.mmaName, cuda.maxSharedBytes, cuda.registerBudget(shape.threads),
                        itemsOf);
  } else {
    os << llvm::formatv("schedule: {0} backend, {1} ({2} f32 lanes, {3} vector registers): "
                        "block_q {4}, block_kv {5}; {6} work items ({7}) over the caller's "
                        "threads (default: all cores)\n",
                        s.backend, cpu.name, cpu.vectorWidth, cpu.vectorRegisters, blockQ,
                        blockKv, workItems, itemsOf);
  }
  os << "tunables: ";
  s.schedule.print(os, "attention");
  if (s.backend == "mlir" && s.gpuTarget.empty())
    os << " (auto: qk_keys " << cpu.qkKeys() << ", qk_row_vectors " << cpu.qkRowVectors()
       << ", pv_rows " << cpu.pvRows() << ", pv_vectors " << cpu.pvVectors() << ", unroll "
       << cpu.loopUnroll() << " on this target)";
  os << "\n";
}
