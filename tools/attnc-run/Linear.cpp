//===- Linear.cpp - attnc-run's linear attention kernels ------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Linear.h"

#include "SeededRun.h"
#include "attnc/Reference/LinearCall.h"
#include "attnc/Reference/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace attnc;
using mlir::attn::LinearAttentionOp;

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Rows [from, from + count) of a [batch, heads, seq, dim] tensor in the
/// layout (bshd: seq is dim 1).
HostTensor rowsOf(const HostTensor &t, bool bshd, int64_t from, int64_t count) {
  llvm::SmallVector<int64_t, 4> shape(t.shape);
  int seqDim = bshd ? 1 : 2;
  shape[seqDim] = count;
  HostTensor r(t.type, shape);
  int64_t outer = bshd ? t.shape[0] : t.shape[0] * t.shape[1];
  int64_t inner = bshd ? t.shape[2] * t.shape[3] : t.shape[3];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < count; ++s)
      std::copy_n(t.data.begin() + (o * t.shape[seqDim] + from + s) * inner, inner,
                  r.data.begin() + (o * count + s) * inner);
  return r;
}

/// Writes `part` as rows [from, ...) of `whole` (rowsOf's inverse).
void putRows(HostTensor &whole, const HostTensor &part, bool bshd, int64_t from) {
  int seqDim = bshd ? 1 : 2;
  int64_t count = part.shape[seqDim];
  int64_t outer = bshd ? whole.shape[0] : whole.shape[0] * whole.shape[1];
  int64_t inner = bshd ? whole.shape[2] * whole.shape[3] : whole.shape[3];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < count; ++s)
      std::copy_n(part.data.begin() + (o * count + s) * inner, inner,
                  whole.data.begin() + (o * whole.shape[seqDim] + from + s) * inner);
}

/// One call of a loaded kernel: its outputs, or the kernel's error.
struct LinearCall {
  const LoadedKernel &kernel;
  mutable LinearAttentionOp op;

  llvm::Expected<LinearResult> operator()(const LinearInputs &in, const HostTensor *s0,
                                          const HostTensor *z0, int threads,
                                          double *seconds = nullptr) const {
    LinearTensors tensors(op, in.q, in.k, in.v, s0, z0);
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = tensors.call(kernel, threads))
      return std::move(err);
    if (seconds)
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return tensors.toHost();
  }
};

/// got against want, each tensor relative to its largest entry.
bool compareLinear(const LinearResult &got, const LinearResult &want, double rtol,
                   llvm::StringRef what) {
  bool ok = compareOutputs((what + "out").str(), got.out, want.out, rtol,
                           rtol * largestMagnitude(want.out));
  if (!got.finalState.empty()) {
    ok &= compareOutputs((what + "final_state").str(), got.finalState, want.finalState, rtol,
                         rtol * largestMagnitude(want.finalState));
    ok &= compareOutputs((what + "final_norm").str(), got.finalNorm, want.finalNorm, rtol,
                         rtol * largestMagnitude(want.finalNorm));
  }
  return ok;
}

/// A prefill of seq - steps rows, then `steps` calls of one row, each from
/// the previous call's final state: the concatenated rows and the last
/// state.
llvm::Expected<LinearResult> runInSteps(const LinearCall &call, const LinearInputs &in,
                                        int64_t steps, int threads) {
  bool bshd = call.op.getLayout() == mlir::attn::Layout::bshd;
  int64_t seq = in.q.shape[bshd ? 1 : 2], prefill = seq - steps;
  LinearResult whole;
  llvm::SmallVector<int64_t, 4> outShape(in.q.shape);
  outShape[3] = call.op.getValueDimOrDefault();
  whole.out = HostTensor(in.q.type, outShape);
  HostTensor s = in.s0, z = in.z0;
  for (int64_t from = 0; from < seq; from += from < prefill ? prefill : 1) {
    int64_t count = from < prefill ? prefill : 1;
    LinearInputs part{rowsOf(in.q, bshd, from, count), rowsOf(in.k, bshd, from, count),
                      rowsOf(in.v, bshd, from, count)};
    llvm::Expected<LinearResult> r = call(part, &s, &z, threads);
    if (!r)
      return r.takeError();
    putRows(whole.out, r->out, bshd, from);
    s = r->finalState, z = r->finalNorm;
  }
  whole.finalState = s, whole.finalNorm = z;
  return std::move(whole);
}

/// FLOPs of one call as `attnc explain` counts them.
double linearFlops(LinearAttentionOp op, const LinearRunOptions &o) {
  double dk = op.getDim(), dv = op.getValueDimOrDefault(), c = op.getChunkOrDefault();
  double heads = double(o.batch) * op.getHeads(), kvHeads = double(o.batch) * op.getKvHeads();
  double seqKv = op.getCausal() ? o.seq : o.seqKv;
  double state = kvHeads * 2 * seqKv * dk * dv;
  return op.getCausal() ? heads * o.seq * (c * (dk + dv) + 2 * dk * dv) + state
                        : heads * 2 * o.seq * dk * dv + state;
}

llvm::Error runCompiled(LinearAttentionOp op, const LinearRunOptions &o, const LinearInputs &in,
                        const LinearResult *ref) {
  std::string name = op->getParentOfType<mlir::attn::KernelOp>().getSymName().str();
  llvm::Expected<LoadedKernel> kernel = loadTableKernel(o.soPath, name);
  if (!kernel)
    return kernel.takeError();
  LinearCall call{*kernel, op};
  const HostTensor *s0 = op.getCarryState() ? &in.s0 : nullptr;
  const HostTensor *z0 = op.getCarryState() ? &in.z0 : nullptr;
  std::vector<double> times;
  std::optional<LinearResult> got;
  for (int r = 0; r <= o.repeat; ++r) { // run 0 warms up
    double seconds = 0;
    llvm::Expected<LinearResult> result = call(in, s0, z0, o.threads, &seconds);
    if (!result)
      return result.takeError();
    if (r)
      times.push_back(seconds);
    got = std::move(*result);
  }
  std::sort(times.begin(), times.end());
  printSpeed(o, "linear attention", name, times, linearFlops(op, o), "attnc explain's count");
  if (!o.dir.empty())
    if (llvm::Error err = writeTensors(o.dir, {{"out", &got->out},
                                               {"final_state", &got->finalState},
                                               {"final_norm", &got->finalNorm}}))
      return err;
  if (!ref)
    return llvm::Error::success();
  double rtol = relativeTolerance(o, in.q.type);
  bool ok = compareLinear(*got, *ref, rtol, "");
  if (o.steps > 0) {
    llvm::Expected<LinearResult> stepped = runInSteps(call, in, o.steps, o.threads);
    if (!stepped)
      return stepped.takeError();
    llvm::outs() << llvm::formatv("in steps: a prefill of {0} rows, then {1} calls of one row "
                                  "each from the previous call's state:\n",
                                  o.seq - o.steps, o.steps);
    ok &= compareLinear(*stepped, *ref, rtol, "stepped ");
  }
  return ok ? llvm::Error::success()
            : error("the compiled linear attention kernel does not match the reference");
}

} // namespace

llvm::Error attnc::runLinear(LinearAttentionOp op, const LinearRunOptions &o) {
  if (o.batch < 1 || o.seq < 0 || o.seqKv < 0)
    return error("linear attention needs --batch >= 1 and lengths >= 0");
  if (op.getCausal() && o.seqKv != o.seq)
    return error("a causal linear attention has one length: give --seq-q alone");
  if (o.steps < 0 || o.steps > o.seq || (o.steps && !op.getCarryState()))
    return error("--steps needs a kernel with state = carry and at most --seq-q steps");
  LinearInputs in = seededLinearInputs(op, o.batch, o.seq, o.seqKv, o.seed);
  std::optional<LinearResult> ref;
  if (!o.noReference) {
    auto start = std::chrono::steady_clock::now();
    llvm::Expected<LinearResult> r =
        evaluateLinear(op, in.q, in.k, in.v, op.getCarryState() ? &in.s0 : nullptr,
                       op.getCarryState() ? &in.z0 : nullptr);
    if (!r)
      return r.takeError();
    ref = std::move(*r);
    llvm::outs() << llvm::formatv(
        "linear attention (reference, double): {0:f3} s; out {1}, max |out| {2:e2}\n",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
        ref->out.shapeString(), largestMagnitude(ref->out));
  }
  if (!o.soPath.empty())
    return runCompiled(op, o, in, ref ? &*ref : nullptr);
  if (!ref)
    return error("--no-reference goes with --so");
  return writeTensors(o.dir, {{"q", &in.q},
                              {"k", &in.k},
                              {"v", &in.v},
                              {"initial_state", &in.s0},
                              {"initial_norm", &in.z0},
                              {"out", &ref->out},
                              {"final_state", &ref->finalState},
                              {"final_norm", &ref->finalNorm}});
}
