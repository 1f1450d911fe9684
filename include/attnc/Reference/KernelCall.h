//===- KernelCall.h - calling a compiled kernel as a user would -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What attnc-run and attnc-tune share: a kernel loaded from a shared object
// built by `attnc --emit=so`, its DLPack tensors (q, k, v and out in the
// spec's dtype, float16 and bfloat16 as raw 16-bit patterns, lse in float32),
// and the comparison of its outputs with the reference.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_KERNELCALL_H
#define ATTNC_REFERENCE_KERNELCALL_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/HostTensor.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace attnc {

/// The DLPack dtype of a kernel tensor of element type `type`.
DLDataType dlpackDtype(ElementType type);

/// A CPU tensor owning its data, stored as the kernel stores its type.
/// Bytes for a kernel's tensors: aligned beyond any element size, and from
/// 2 MiB up on transparent huge pages where the OS gives them on request
/// (transparent_hugepage = madvise), as the read-bandwidth probe's buffer
/// and a serving system's preallocated KV cache are: a decode kernel reads
/// such tensors at the bandwidth the probe measures, not at the TLB's pace.
template <typename T> struct TensorAllocator {
  using value_type = T;
  TensorAllocator() = default;
  template <typename U> TensorAllocator(const TensorAllocator<U> &) {}
  T *allocate(size_t n);
  void deallocate(T *p, size_t n);
  bool operator==(const TensorAllocator &) const { return true; }
};

struct DeviceTensor {
  ElementType type;
  std::vector<int64_t> shape;
  std::vector<char, TensorAllocator<char>> data;
  DLTensor dl{};

  DeviceTensor(ElementType type, llvm::ArrayRef<int64_t> dims);
  DeviceTensor(const DeviceTensor &) = delete;
  /// `t`'s values rounded to `type` by the reference's own rounding (to
  /// nearest, ties to even), after which storing them is exact.
  static std::unique_ptr<DeviceTensor> from(ElementType type, const HostTensor &t);
  HostTensor toHost() const;
  int64_t numElements() const;
  double megabytes() const { return data.size() / double(1 << 20); }
};

using KernelEntryFn = int (*)(const DLTensor *, const DLTensor *, const DLTensor *,
                              DLTensor *, DLTensor *, const attnc_options *);
/// The entry of a kernel that also outputs the attention weights.
using WeightsEntryFn = int (*)(const DLTensor *, const DLTensor *, const DLTensor *,
                               DLTensor *, DLTensor *, DLTensor *, const attnc_options *);

/// A kernel's entry point and error text from a shared object.
struct LoadedKernel {
  KernelEntryFn entry = nullptr;
  const char *(*lastError)() = nullptr;
  /// Its descriptor and the runtime's array launch (attnc_rt_run), for calls
  /// whose argument list no entry type above spells (mod inputs).
  const attnc_kernel_desc *desc = nullptr;
  int (*run)(const attnc_kernel_desc *, const DLTensor *const *, const attnc_options *) = nullptr;
  void *handle = nullptr; // the dlopen handle
};

/// Loads kernel `name` from `soPath` with every symbol bound now (so a
/// missing symbol is this error, not a "symbol lookup error" at the first
/// call). `global` makes its symbols visible to later libraries (attnc-run's
/// test instrumentation reads them); attnc-tune loads many candidates, each
/// with its own copy of the runtime, so it keeps them local.
llvm::Expected<LoadedKernel> loadKernel(llvm::StringRef soPath, llvm::StringRef name,
                                        bool global);

/// loadKernel (local symbols) for a call through the descriptor
/// (attnc_rt_run): an error when the object lacks either.
llvm::Expected<LoadedKernel> loadTableKernel(llvm::StringRef soPath, llvm::StringRef name);

/// The entry of a decode kernel with kv_cache: kv_lens, and block_table when
/// paged; a varlen kernel's takes cu_seqlens_q and cu_seqlens_kv there.
using LensEntryFn = int (*)(const DLTensor *, const DLTensor *, const DLTensor *, DLTensor *,
                            DLTensor *, const DLTensor *, const attnc_options *);
using PagedEntryFn = int (*)(const DLTensor *, const DLTensor *, const DLTensor *, DLTensor *,
                             DLTensor *, const DLTensor *, const DLTensor *,
                             const attnc_options *);
/// A varlen kernel with kv_cache = lengths: cu_seqlens_q, cu_seqlens_kv, kv_lens.
using VarlenLensEntryFn = int (*)(const DLTensor *, const DLTensor *, const DLTensor *,
                                  DLTensor *, DLTensor *, const DLTensor *, const DLTensor *,
                                  const DLTensor *, const attnc_options *);

/// An int32 host tensor (kv_lens, block_table).
struct IndexTensor {
  std::vector<int32_t> data;
  std::vector<int64_t> shape;
  DLTensor dl{};
  IndexTensor(std::vector<int32_t> values, std::vector<int64_t> dims);
  IndexTensor(const IndexTensor &) = delete;
};

struct KvCache;
struct Varlen;

/// One call's tensors for `op` on q, k, v: out and (if the spec has it) lse;
/// with a kv_cache, kv_lens and, paged, k and v as pages and block_table;
/// with varlen, q, k, v and out packed and cu_seqlens_q and cu_seqlens_kv.
struct KernelTensors {
  std::unique_ptr<DeviceTensor> q, k, v, out, lse, weights; // weights: when the spec has them
  std::unique_ptr<IndexTensor> kvLens, blockTable, cuQ, cuKv;
  std::vector<std::unique_ptr<DeviceTensor>> modInputs; // in the spec's order
  bool wantLse = false;

  KernelTensors(mlir::attn::AttentionSpecOpInterface op, const HostTensor &q, const HostTensor &k,
                const HostTensor &v, const KvCache *cache = nullptr,
                const Varlen *varlen = nullptr, const ModInputs *inputs = nullptr);
  /// Calls the kernel once; the error carries attnc_last_error's text.
  llvm::Error call(const LoadedKernel &kernel, int threads);
  double megabytes() const;
  /// out and lse as the reference has them (padded again for varlen).
  HostTensor outToHost() const;
  HostTensor lseToHost() const;

private:
  void packVarlen(mlir::attn::AttentionSpecOpInterface op, ElementType type, const HostTensor &q,
                  const HostTensor &k, const HostTensor &v);
  const Varlen *varlen = nullptr;
  int64_t seqQ = 0; // varlen: the padded length
};

/// How far a kernel output may be from the reference's, per element:
/// |got - ref| <= atol + rtol |ref|.
struct Tolerance {
  double rtol, atol;
};

/// The tolerance of a kernel of element type `type` against the reference:
/// the numeric matrix's (test/numerics/matrix.json, "tolerances"). f32
/// kernels differ from the double reference by f32 accumulation over tiles
/// and a polynomial exp; f16 / bf16 kernels also round q, k, v and out.
Tolerance defaultTolerance(ElementType type);

/// The rtol of the families checked against each output's largest entry
/// (|got - ref| <= rtol (|ref| + max |ref|): linear attention, projections,
/// multi-head attention): f32 1e-4, f16 4e-3, bf16 2e-2.
double relativeTolerance(ElementType type);

/// How much larger than the matrix's inputs (uniform in [-1, 1)) these are:
/// `values`, max |v| (out is a convex combination of v rows, so its absolute
/// error grows with it), and `scores`, the bound scale * head_dim * max |q| *
/// max |k| on |score| against its value at unit inputs (exp's and the
/// log-sum-exp's rounding grow with it); each at least 1.
struct InputMagnitude {
  double values = 1, scores = 1;
};
InputMagnitude inputMagnitude(const HostTensor &q, const HostTensor &k, const HostTensor &v);

/// `base`'s atol scaled to the inputs: out's by values x scores, lse's by
/// scores (rtol is relative already).
Tolerance scaledOutTolerance(Tolerance base, InputMagnitude m);
Tolerance scaledLseTolerance(Tolerance base, InputMagnitude m);

struct Comparison {
  double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, worst = -1; // elements off, and the flat index of the worst
  bool ok() const { return bad == 0; }
};

/// |got - ref| <= atol + rtol |ref| per element; an infinity where the reference has the
/// same one, NaN where it has NaN; every other non-finite value is off (and the worst).
Comparison compareTensors(const HostTensor &got, const HostTensor &ref, Tolerance tol);

/// compareTensors, printed with the largest errors; false on a mismatch.
bool compareOutputs(llvm::StringRef name, const HostTensor &got, const HostTensor &ref,
                    double rtol, double atol);

} // namespace attnc

#endif // ATTNC_REFERENCE_KERNELCALL_H
