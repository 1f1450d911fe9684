//===- FlashPipeline.h - attn.flash as a Halide pipeline --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The Halide backend's entry points. They take the tiled kernel as plain data
// (FlashProblem: no MLIR types), so the code that includes Halide.h never
// includes MLIR or LLVM headers; libHalide carries its own LLVM.
//
// On a CPU target the pipeline computes one work item, as the MLIR backend's
// tile function does: query rows [q0, q0 + rows) of one (batch, head), all KV
// tiles the mask does not skip. The runtime's thread pool runs the items; a
// small adapter (lib/Runtime/HalideTile.cpp) turns the tile function's memref
// views into halide_buffer_t views of that item's rows. Its C signature:
//
//   int <name>_halide(halide_buffer_t *q,   // [rows, head_dim]    (d innermost)
//                     halide_buffer_t *k,   // [seq_kv, head_dim]
//                     halide_buffer_t *v,   // [seq_kv, head_dim]
//                     int32_t b, int32_t h, // for the mods
//                     int32_t q0, int32_t seq_q, int32_t seq_kv,
//                     halide_buffer_t *input_<name>, ... // the spec's inputs, whole
//                     halide_buffer_t *out, // [rows, head_dim], the spec's dtype
//                     halide_buffer_t *lse) // [rows], float32
//
// On a GPU target it computes the whole tensors in one call (one GPU block
// per work item; lib/Runtime/HalideGrid.cpp is its adapter):
//
//   int <name>_halide(void *user_context,     // attnc's (the CUDA stream)
//                     halide_buffer_t *q,     // (d, seq, head, batch), any strides
//                     halide_buffer_t *k, halide_buffer_t *v, // (d, seq, kv head, batch)
//                     halide_buffer_t *input_<name>, ... // the spec's inputs, whole
//                     halide_buffer_t *out,   // like q
//                     halide_buffer_t *lse,   // only if the kernel outputs it: float32,
//                                             // (d, seq, head, batch) with d's stride 0
//                     halide_buffer_t *index_failure) // only with inputs: int32
//                                             // (seq_q, head, batch), the argument of an
//                                             // input a mod loaded outside of, or 0
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_HALIDE_FLASHPIPELINE_H
#define ATTNC_TARGET_HALIDE_FLASHPIPELINE_H

#include "attnc/Support/MaskRules.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnc::halide {

enum class ElemType { f32, f16, bf16 };

/// A score_mod / mask_mod body as plain data. Values 0..numArgs-1 are the
/// region's arguments (score_mod: score, b, h, q_idx, kv_idx; mask_mod: b, h,
/// q_idx, kv_idx); each op then adds one value, in order.
struct ModOp {
  std::string name;          // the MLIR op's name, e.g. "arith.mulf"
  std::string type;          // its result type: f16, bf16, f32, f64, i1..i64, index
  std::vector<int> operands; // earlier values
  std::string predicate;     // cmpf / cmpi: "olt", "slt", ...
  double floatValue = 0;     // arith.constant
  int64_t intValue = 0;
  std::string input;         // attn.load: the input it reads (operands: its indices)
};
struct ModBody {
  std::vector<std::string> argTypes;
  std::vector<ModOp> ops;
  int result = 0; // the yielded value
};

/// A tensor the mods read (a spec's `inputs`): i32 or f32, its dims in the
/// spec's order (the pipeline's buffer has them innermost first). `arg` is
/// its argument in the kernel's interface (what an index failure reports).
struct ModInputDecl {
  std::string name;
  bool isInt = true;
  int rank = 1;
  int arg = 0;
};

/// One attn.flash kernel, as the Halide backend needs it.
struct FlashProblem {
  std::string name; // the kernel's symbol; the pipeline is <name>_halide
  int64_t dim = 0;  // head_dim
  ElemType dtype = ElemType::f32;
  int64_t blockQ = 64, blockKv = 64;
  int64_t unroll = 0; // reduction steps per loop iteration (CPU schedule; 0: the target's)
  int64_t group = 1; // query heads per kv head (GQA)
  bool lse = false;  // whether the kernel outputs lse (grid pipelines)
  double scale = 1.0;
  mask::Mask mask;
  std::optional<ModBody> scoreMod, maskMod;
  std::vector<ModInputDecl> inputs;
};

/// A target of the Halide backend.
struct HalideTarget {
  std::string halideTarget; // Halide's target string
  int vectorWidth;          // f32 lanes of the CPU schedule
  bool gpu = false;         // a grid pipeline on the GPU schedule
  int vectorRegisters = 16; // architectural vector registers (the CPU register blocks)
};

/// Where a pipeline's schedule comes from: the hand-written CPU schedule
/// (FlashScheduleCpu.cpp) or one of the autoschedulers the Halide wheel ships
/// (CPU ones; loaded as plugins, run with parallelism 1: the runtime already
/// spreads work items over the threads).
inline constexpr const char *kScheduleSources[] = {"hand", "mullapudi2016", "li2018",
                                                   "adams2019"};

/// The attnc targets the Halide backend has (the registry lists these). The
/// GPU ones: CUDA, and OpenCL, which runs the same GPU schedule on any OpenCL
/// device (PoCL on the CPU, here) to check its numerics without a GPU.
inline constexpr const char *kHalideCpuTargets[] = {"x86-64-avx512", "x86-64-avx2"};
inline constexpr const char *kHalideGpuTargets[] = {"cuda-sm80", "cuda-sm90", "opencl"};

/// The Halide target for an attnc target name (one of kHalideCpuTargets or
/// kHalideGpuTargets); false if the Halide backend has no such target.
bool lookupHalideTarget(const std::string &name, HalideTarget &target);

/// `source` is one of kScheduleSources.
/// Writes the pipeline's object file to `path`: with Halide's runtime (weak
/// symbols) when `withRuntime`, else without (to be linked with
/// compileRuntimeObject's). Returns "" or what went wrong.
std::string compileFlashObject(const FlashProblem &problem, const HalideTarget &target,
                               const std::string &source, const std::string &path,
                               bool withRuntime = true);

/// Writes Halide's runtime for `target` alone (weak symbols) to `path`: what
/// every pipeline object of that target otherwise carries, and what most of
/// its compile time goes to (about 1.1 of 1.7 s per kernel on a Zen 3).
/// Returns "" or what went wrong.
std::string compileRuntimeObject(const HalideTarget &target, const std::string &path);

/// The pipeline's lowered statement (`attnc --emit=halide`), or an error
/// message in `error`.
std::string lowerFlashStmt(const FlashProblem &problem, const HalideTarget &target,
                           const std::string &source, std::string &error);

/// A GPU pipeline's device code as Halide embeds it in the object: PTX on a
/// CUDA target (`attnc --emit=ptx`), OpenCL C on opencl; or an error message
/// in `error`.
std::string flashDeviceCode(const FlashProblem &problem, const HalideTarget &target,
                            std::string &error);

} // namespace attnc::halide

#endif // ATTNC_TARGET_HALIDE_FLASHPIPELINE_H
