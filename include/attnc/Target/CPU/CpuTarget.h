//===- CpuTarget.h - x86-64 targets and machine code emission ---*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The CPU target description (the facts the lowering of attn.flash needs:
// vector width, register count, the Q K^T register block they allow) and the
// way from an LLVM-dialect module to optimized LLVM IR, assembly or an object
// file, in process through LLVM's TargetMachine.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_CPU_CPUTARGET_H
#define ATTNC_TARGET_CPU_CPUTARGET_H

#include "attnc/Support/RegisterBlocks.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace attnc {

struct CpuTarget {
  std::string name;        // x86-64-avx512, -avx512-bf16, -avx2, x86-64, aarch64-neon, host
  std::string cpu;         // LLVM CPU name
  std::string features;    // LLVM feature string
  int64_t vectorWidth;     // f32 lanes of the widest vector used
  int64_t vectorRegisters; // architectural vector registers (zmm0-31: 32)
  std::string needs;       // what a CPU must have to run the code, in words
  bool bf16Dot = false;    // AVX512-BF16: bf16 kernels use vdpbf16ps
  /// attnc_cpu_feature bits the code needs (attnc_runtime.h), checked by the
  /// runtime before it runs the code and used to pick a variant.
  uint64_t cpuNeeds = 0;
  /// AArch64 SVE at a fixed vector length (bits; 0: none): the code assumes
  /// at least this length (LLVM's vscale_range).
  int64_t sveVectorBits = 0;
  /// LLVM target triple of the code.
  std::string triple = "x86_64-unknown-linux-gnu";
  bool isX86() const { return llvm::StringRef(triple).starts_with("x86_64"); }
  /// Per-core L2 of the CPUs the x86-64 targets stand for (Zen 4/5 and
  /// Skylake-SP and later: 1-2 MiB); a KV tile's working set beyond it
  /// streams from L3 on every query tile.
  int64_t l2Bytes = 1 << 20;

  /// The register blocks of the Q K^T and P V loops (RegisterBlocks.h).
  RegisterBlocks blocks() const { return registerBlocks(vectorRegisters); }
  int64_t qkKeys() const { return blocks().qkKeys; }
  int64_t qkRowVectors() const { return blocks().qkRowVectors; }
  int64_t pvRows() const { return blocks().pvRows; }
  int64_t pvVectors() const { return blocks().pvVectors; }
  int64_t loopUnroll() const { return reductionUnroll(vectorWidth, vectorRegisters); }
  /// Whether this machine's CPU can run code built for the target.
  bool runsHere() const;
};

/// The names accepted by --target.
llvm::StringRef cpuTargetNames();
llvm::Expected<CpuTarget> lookupCpuTarget(llvm::StringRef name);

/// Translates an LLVM-dialect module to LLVM IR for `target` and optimizes it
/// at -O3.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(mlir::ModuleOp module, const CpuTarget &target,
                     llvm::LLVMContext &context);

/// Writes assembly (`assembly`) or an ELF object for `module`.
llvm::Error emitMachineCode(llvm::Module &module, const CpuTarget &target,
                            bool assembly, llvm::raw_pwrite_stream &os);

} // namespace attnc

#endif // ATTNC_TARGET_CPU_CPUTARGET_H
