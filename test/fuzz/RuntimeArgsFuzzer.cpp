//===- RuntimeArgsFuzzer.cpp - libFuzzer target: the runtime's checks -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Random kernel descriptors and DLTensors through attnc_rt_launch (and for
// packed varlen kernels, with offsets mostly valid and sometimes any int32,
// and sometimes each sequence's used keys, kv_lens, likewise, attnc_rt_run).
// Shapes
// are mostly small and sometimes hostile (2^32 and beyond, negative,
// INT64_MAX), strides compact or arbitrary, byte offsets anything, tensors
// sometimes NULL, of another dtype or device, or placed inside another one.
// A fake kernel then reads and writes every row of every work item (first
// and last head_dim element), through the views and params the runtime
// built, exactly as a compiled kernel addresses them. Each tensor's memory is
// an allocation of exactly the bytes its description spans, so an accepted
// launch that reaches outside is an ASan report. After ATTNC_OK the harness
// also checks, from the descriptions alone, what the runtime promises: out
// and lse overlap neither each other nor an input. Launches whose work or
// memory would be huge are not made (the runtime rightly accepts sizes no
// allocation here could back).
//
//===----------------------------------------------------------------------===//

#include "attnc/Interface/KernelInterface.h"
#include "attnc/Runtime/attnc_runtime.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

enum { Q, K, V, Out, Lse, CuQ, CuKv, KvLens, Tensors };

constexpr int64_t kMaxBytes = 1 << 20; // per tensor allocation
constexpr int64_t kMaxItems = 1 << 16; // work items of a launch made

const attnc::AttentionFacts *gFacts;
/// Whether the fake kernel touches memory: only when every tensor is backed.
/// Otherwise it checks its indices against the runtime's views alone.
bool gTouch;

/// What memory a description spans.
enum class Span {
  backed,   // elements within kMaxBytes: allocated exactly ([lo, hi] relative to data)
  empty,    // no elements (a length 0)
  huge,     // well-formed but beyond kMaxBytes: no allocation here can back it
  malformed // a negative length or stride, or arithmetic past int64: must be refused
};

/// A tensor's description, and the allocation backing it.
struct Tensor {
  DLTensor t{};
  int64_t shape[5] = {}, strides[5] = {};
  std::vector<unsigned char> memory;
  Span span = Span::malformed;
  int64_t lo = 0, hi = -1; // byte range of its elements (when backed)

  /// Whether `memory` spans every element the description can address.
  bool backed() const { return span == Span::backed; }
};

int64_t hostileLength(FuzzedDataProvider &in) {
  switch (in.ConsumeIntegralInRange(0, 15)) {
  case 0:
    return int64_t(1) << 32;
  case 1:
    return INT64_MAX;
  case 2:
    return -in.ConsumeIntegralInRange<int64_t>(1, 3);
  case 3:
    return in.ConsumeIntegral<int64_t>();
  default:
    return in.ConsumeIntegralInRange<int64_t>(0, 9);
  }
}

int64_t elementBytes(const DLTensor &t) { return (int64_t(t.dtype.bits) * t.dtype.lanes + 7) / 8; }


/// `t`'s span if its data were at address `at`; [lo, hi] are its bytes
/// relative to data when backed. Malformed is what the runtime must refuse:
/// element offsets past int64 bytes, or an end past the address space.
Span span(const DLTensor &t, uintptr_t at, int64_t &lo, int64_t &hi) {
  int64_t elem = elementBytes(t);
  if (elem <= 0)
    return Span::malformed;
  __int128 last = 0;
  bool empty = false;
  for (int i = 0; i < t.ndim; ++i) {
    __int128 n = t.shape[i], s = 1;
    if (t.strides)
      s = t.strides[i];
    else // compact: the stride is the product of the inner lengths
      for (int j = i + 1; j < t.ndim; ++j) // capped: past 2^64 it is malformed anyway
        s = std::min<__int128>(s * (t.shape[j] > 0 ? t.shape[j] : 1), __int128(1) << 64);
    if (n < 0 || s < 0)
      return Span::malformed;
    empty = empty || n == 0;
    if (n > 1)
      last += (n - 1) * s; // < 2^127: n < 2^63, s <= 2^64, last <= 2^64 before
    if (last > __int128(1) << 64)
      return Span::malformed;
  }
  if (empty)
    return Span::empty;
  __int128 bytes = (last + 1) * elem, end = __int128(t.byte_offset) + bytes;
  if (bytes > __int128(INT64_MAX) || __int128(at) + end > __int128(UINTPTR_MAX))
    return Span::malformed;
  if (end > kMaxBytes)
    return Span::huge;
  lo = int64_t(t.byte_offset);
  hi = int64_t(end) - 1;
  return Span::backed;
}

void makeTensor(FuzzedDataProvider &in, Tensor &x, int ndim, DLDataType dtype) {
  DLTensor &t = x.t;
  t.ndim = in.ConsumeIntegralInRange(0, 15) == 0 ? in.ConsumeIntegralInRange(0, 5) : ndim;
  t.dtype = dtype;
  if (in.ConsumeIntegralInRange(0, 15) == 0)
    t.dtype.bits = in.ConsumeIntegralInRange<uint8_t>(0, 64);
  t.device = {in.ConsumeIntegralInRange(0, 31) == 0 ? kDLCUDA : kDLCPU, 0};
  for (int i = 0; i < t.ndim; ++i)
    x.shape[i] = hostileLength(in);
  t.shape = x.shape;
  if (in.ConsumeBool()) {
    for (int i = 0; i < t.ndim; ++i)
      x.strides[i] = in.ConsumeIntegralInRange(0, 7) == 0 ? hostileLength(in)
                                                          : in.ConsumeIntegralInRange(0, 40);
    t.strides = x.strides;
  }
  t.byte_offset = in.ConsumeIntegralInRange(0, 7) == 0 ? in.ConsumeIntegral<uint64_t>()
                                                       : 2 * in.ConsumeIntegralInRange(0, 8);
  int64_t lo = 0, hi = 0;
  x.memory.assign(1, 0);
  x.span = span(t, reinterpret_cast<uintptr_t>(x.memory.data()), lo, hi);
  // Exactly the bytes the description spans: ASan catches any access beyond.
  if (x.backed())
    x.memory.assign(size_t(hi - lo + 1), 0);
  t.data = x.memory.data() - (x.backed() ? lo : 0);
  if (x.backed()) {
    x.lo = reinterpret_cast<intptr_t>(x.memory.data());
    x.hi = x.lo + int64_t(x.memory.size()) - 1;
  }
}

/// Entry i of a varlen kernel's offsets, read through the runtime's view and
/// stride as a compiled kernel reads it.
int64_t offsetAt(attnc_memref *cu, const int64_t *p, int param, int64_t i) {
  int64_t at = i * p[param];
  if (at < 0 || at >= cu->size)
    __builtin_trap(); // outside the view the runtime built
  return static_cast<const int32_t *>(cu->aligned)[cu->offset + at];
}

/// Touches the first and last head_dim element of each row of one work item
/// (and one k / v row), through the runtime's views and params; a varlen
/// kernel's rows start where its offsets (cuQ, cuKv) say, and with kv_lens
/// a sequence reads that many keys of its span.
int32_t fakeTile(attnc_memref *q, attnc_memref *k, attnc_memref *v, attnc_memref *out,
                 attnc_memref *lse, attnc_memref *cuQ, attnc_memref *cuKv,
                 attnc_memref *kvLens, attnc_memref_i64 *params, int64_t b, int64_t h,
                 int64_t tile) {
  const attnc::AttentionFacts &d = *gFacts;
  const int64_t *p = params->aligned + params->offset;
  int64_t elem = d.dtypeBits / 8, g = h / (d.heads / d.kvHeads);
  auto touch = [&](attnc_memref *m, int64_t bytes, const int64_t *s, int64_t hh, int64_t row,
                   bool write, bool perRow) {
    for (int64_t c : {int64_t(0), perRow ? int64_t(0) : int64_t(d.headDim - 1)}) {
      int64_t i = b * s[0] + hh * s[1] + row * s[2] + c;
      if (i < 0 || i >= m->size)
        __builtin_trap(); // outside the view the runtime built
      if (!gTouch)
        continue;
      auto *at = static_cast<volatile unsigned char *>(m->aligned) + (m->offset + i) * bytes;
      for (int64_t byte = 0; byte < bytes; ++byte)
        at[byte] = write ? 0 : at[byte];
    }
  };
  int64_t seqQ = p[ATTNC_P_SEQ_Q], seqKv = p[ATTNC_P_SEQ_KV], qFirst = 0, kvFirst = 0;
  if (d.varlen) { // the batch strides are 0: rows count from the packed tensors' start
    qFirst = offsetAt(cuQ, p, ATTNC_P_CU_SEQLENS_Q_STRIDES, b);
    seqQ = offsetAt(cuQ, p, ATTNC_P_CU_SEQLENS_Q_STRIDES, b + 1) - qFirst;
    kvFirst = offsetAt(cuKv, p, ATTNC_P_CU_SEQLENS_KV_STRIDES, b);
    seqKv = offsetAt(cuKv, p, ATTNC_P_CU_SEQLENS_KV_STRIDES, b + 1) - kvFirst;
    if (kvLens)
      seqKv = offsetAt(kvLens, p, ATTNC_P_VARLEN_KV_LENS_STRIDES, b);
  }
  for (int64_t s = tile * d.blockQ; s < std::min(seqQ, (tile + 1) * d.blockQ); ++s) {
    touch(q, elem, p + ATTNC_P_Q_STRIDES, h, qFirst + s, false, false);
    if (seqKv > 0) {
      touch(k, elem, p + ATTNC_P_K_STRIDES, g, kvFirst + seqKv - 1, false, false);
      touch(v, elem, p + ATTNC_P_V_STRIDES, g, kvFirst, false, false);
    }
    touch(out, elem, p + ATTNC_P_OUT_STRIDES, h, qFirst + s, true, false);
    if (lse->size > 0)
      touch(lse, 4, p + ATTNC_P_LSE_STRIDES, h, qFirst + s, true, true);
  }
  return 0;
}

/// The phase's item function, as attn-emit-cpu-entry writes it for a compiled kernel.
int32_t fakeItem(attnc_memref *t, attnc_memref_i64 *params, const int64_t *index) {
  bool varlen = gFacts->varlen, lens = varlen && gFacts->pageSize == 0; // views given
  return fakeTile(&t[0], &t[1], &t[2], &t[3], &t[4], varlen ? &t[5] : nullptr,
                  varlen ? &t[6] : nullptr, lens ? &t[7] : nullptr, params, index[0], index[1],
                  index[2]);
}

/// Whether `x` is backed int32 entries (the fuzzer may have changed its rank or dtype).
bool backedOffsets(const Tensor &x) {
  return x.backed() && x.t.ndim == 1 && x.t.dtype.code == kDLInt && x.t.dtype.bits == 32 &&
         x.t.dtype.lanes == 1;
}

/// A varlen kernel's offsets: mostly non-decreasing within [0, total] (a
/// sequence may be empty), sometimes any int32; written at the tensor's stride.
void fillOffsets(FuzzedDataProvider &in, Tensor &x, int64_t total) {
  if (!backedOffsets(x))
    return;
  int64_t stride = x.t.strides ? x.t.strides[0] : 1, at = 0;
  bool hostile = in.ConsumeIntegralInRange(0, 7) == 0;
  // Zero strides back any extent with one entry: such launches are not made (below).
  for (int64_t i = 0; i < std::min(x.shape[0], kMaxItems + 1); ++i) {
    at = hostile ? in.ConsumeIntegral<int32_t>()
                 : std::min<int64_t>(total, at + in.ConsumeIntegralInRange(0, 9));
    int32_t value = int32_t(at);
    std::memcpy(x.memory.data() + i * stride * 4, &value, 4); // memory starts at entry 0
  }
}

/// kv_lens: entry b mostly within sequence b's span of the key offsets `cu`
/// (as given, which may be hostile), sometimes any int32.
void fillLens(FuzzedDataProvider &in, Tensor &x, const Tensor &cu) {
  if (!backedOffsets(x))
    return;
  int64_t stride = x.t.strides ? x.t.strides[0] : 1;
  int64_t cuStride = cu.t.strides ? cu.t.strides[0] : 1;
  bool hostile = in.ConsumeIntegralInRange(0, 7) == 0;
  for (int64_t i = 0; i < std::min(x.shape[0], kMaxItems); ++i) {
    int32_t value = in.ConsumeIntegral<int32_t>(), from = 0, to = 0;
    if (!hostile && backedOffsets(cu) && i + 1 < cu.shape[0]) {
      std::memcpy(&from, cu.memory.data() + i * cuStride * 4, 4);
      std::memcpy(&to, cu.memory.data() + (i + 1) * cuStride * 4, 4);
      value = int32_t(std::max<int64_t>(0, int64_t(to) - from -
                                               in.ConsumeIntegralInRange(0, 3)));
    }
    std::memcpy(x.memory.data() + i * stride * 4, &value, 4);
  }
}

/// The work a varlen launch would be: batch x heads x the longest sequence's
/// tiles, from the query offsets as given (the runtime checks them).
int64_t varlenItems(const Tensor &cu, const attnc::AttentionFacts &f) {
  if (!backedOffsets(cu))
    return 0;
  if (cu.shape[0] > kMaxItems) // the runtime reads every offset
    return INT64_MAX;
  int64_t stride = cu.t.strides ? cu.t.strides[0] : 1, longest = 0;
  auto entry = [&](int64_t i) {
    int32_t v;
    std::memcpy(&v, cu.memory.data() + i * stride * 4, 4);
    return int64_t(v);
  };
  for (int64_t i = 1; i < cu.shape[0]; ++i)
    longest = std::max(longest, entry(i) - entry(i - 1));
  return (cu.shape[0] - 1) * f.heads * ((longest + f.blockQ - 1) / f.blockQ);
}

bool overlaps(const Tensor &a, const Tensor &b) { return a.lo <= b.hi && b.lo <= a.hi; }

/// With ATTNC_FUZZ_DEBUG set: the launch, for reproducing a finding by hand.
void describe(const attnc::AttentionFacts &d, Tensor (&x)[Tensors],
              DLTensor *const (&t)[Tensors]) {
  if (!std::getenv("ATTNC_FUZZ_DEBUG"))
    return;
  std::fprintf(stderr, "facts: heads %lld/%lld dim %lld dtype %d/%d layout %d outputs %d "
               "block_q %lld max_seq %lld varlen %d kv_lens %d\n", (long long)d.heads,
               (long long)d.kvHeads, (long long)d.headDim, d.dtypeCode, d.dtypeBits, d.layout,
               d.outputs, (long long)d.blockQ, (long long)d.maxSeqQ, int(d.varlen),
               int(d.pageSize == 0));
  static const char *names[] = {"q",   "k",          "v",             "out",
                                "lse", "cu_seqlens_q", "cu_seqlens_kv", "kv_lens"};
  for (int i = 0; i < Tensors; ++i) {
    const DLTensor &u = x[i].t;
    std::fprintf(stderr, "%s%s: data %p dtype %d/%d device %d offset %llu shape", names[i],
                 t[i] ? "" : " (NULL)", u.data, u.dtype.code, u.dtype.bits,
                 u.device.device_type, (unsigned long long)u.byte_offset);
    for (int j = 0; j < u.ndim; ++j)
      std::fprintf(stderr, " %lld", (long long)u.shape[j]);
    std::fprintf(stderr, u.strides ? " strides" : " compact");
    for (int j = 0; u.strides && j < u.ndim; ++j)
      std::fprintf(stderr, " %lld", (long long)u.strides[j]);
    std::fprintf(stderr, "; span %d, %zu bytes\n", int(x[i].span), x[i].memory.size());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  attnc_kernel_desc desc{};
  desc.abi_version = in.ConsumeIntegralInRange(0, 31) == 0 ? 3 : ATTNC_ABI_VERSION;
  desc.device_type = kDLCPU;
  // The facts become the descriptor's tables as attn-emit-cpu-entry makes them.
  attnc::AttentionFacts facts;
  facts.kvHeads = in.ConsumeIntegralInRange(1, 4);
  facts.heads = facts.kvHeads * in.ConsumeIntegralInRange(1, 3);
  facts.headDim = in.ConsumeIntegralInRange(1, 16);
  int dtype = in.ConsumeIntegralInRange(0, 2);
  DLDataType type = {uint8_t(dtype == 2 ? kDLBfloat : kDLFloat), uint8_t(dtype ? 16 : 32), 1};
  facts.dtypeCode = type.code;
  facts.dtypeBits = type.bits;
  facts.layout = in.ConsumeIntegralInRange(0, 1);
  facts.outputs = in.ConsumeBool() ? 3 : 1;
  facts.blockQ = in.ConsumeIntegralInRange(1, 16);
  facts.maxSeqQ = in.ConsumeIntegralInRange(0, 3) == 0 ? in.ConsumeIntegralInRange(1, 9) : 0;
  facts.maxSeqKv = facts.maxSeqQ;
  // Sometimes packed sequences (varlen): token-major, with offsets.
  facts.varlen = in.ConsumeIntegralInRange(0, 3) == 0;
  if (facts.varlen)
    facts.layout = 1;
  // ... and sometimes with each sequence's used keys (kv_cache = lengths).
  if (facts.varlen && in.ConsumeBool())
    facts.pageSize = 0;
  bool lens = facts.pageSize == 0;
  attnc::InterfaceTables tables(attnc::attentionInterface(facts));
  tables.fill(desc, fakeItem, nullptr);
  desc.name = "fuzz";
  desc.target = "fuzz";
  gFacts = &facts;

  Tensor x[Tensors];
  int rank = facts.varlen ? 3 : 4; // packed: [total, heads, head_dim]
  for (int i = Q; i <= Out; ++i)
    makeTensor(in, x[i], rank, type);
  makeTensor(in, x[Lse], rank - 1, {kDLFloat, 32, 1});
  if (facts.varlen)
    for (int i : {CuQ, CuKv}) {
      makeTensor(in, x[i], 1, {kDLInt, 32, 1});
      fillOffsets(in, x[i], x[i == CuQ ? Q : K].shape[0]);
    }
  if (lens) {
    makeTensor(in, x[KvLens], 1, {kDLInt, 32, 1});
    fillLens(in, x[KvLens], x[CuKv]);
  }
  // Sometimes an output placed at the start of another tensor's memory.
  if (in.ConsumeIntegralInRange(0, 7) == 0) {
    int from = in.ConsumeIntegralInRange(0, 4), to = in.ConsumeIntegralInRange(3, 4);
    Tensor &a = x[from], &o = x[to];
    if (from != to && a.backed() && o.backed() && o.memory.size() <= a.memory.size()) {
      o.t.data = a.memory.data() - int64_t(o.t.byte_offset);
      o.lo = reinterpret_cast<intptr_t>(a.memory.data());
      o.hi = o.lo + int64_t(o.memory.size()) - 1;
    }
  }
  int used = lens ? Tensors : facts.varlen ? KvLens : CuQ;
  gTouch = true;
  for (int i = 0; i < used; ++i)
    gTouch = gTouch && x[i].backed();
  // The work a launch would be, from q's shape (the runtime checks the others
  // against it): not made when huge, which only hostile lengths give.
  if (facts.varlen && (varlenItems(x[CuQ], facts) > kMaxItems ||
                       (backedOffsets(x[CuKv]) && x[CuKv].shape[0] > kMaxItems) ||
                       (lens && backedOffsets(x[KvLens]) && x[KvLens].shape[0] > kMaxItems)))
    return 0;
  if (!facts.varlen && x[Q].t.ndim == 4) {
    int seqDim = facts.layout == 0 ? 2 : 1;
    int64_t batch = x[Q].shape[0], seq = x[Q].shape[seqDim];
    if (batch > 0 && seq > 0 &&
        (batch > kMaxItems || seq > kMaxItems * facts.blockQ ||
         batch * facts.heads * ((seq + facts.blockQ - 1) / facts.blockQ) > kMaxItems))
      return 0;
  }
  // The runtime itself writes the outputs of a launch with seq_kv = 0, and
  // reads every offset, so a well-formed output or offsets tensor this
  // harness cannot back must not be handed over.
  for (int i : {Out, Lse, CuQ, CuKv, KvLens})
    if (x[i].span == Span::huge)
      x[i].t.data = nullptr;
  DLTensor *t[Tensors];
  for (int i = 0; i < Tensors; ++i)
    t[i] = in.ConsumeIntegralInRange(0, 31) == 0 ? nullptr : &x[i].t;
  describe(facts, x, t);
  attnc_options opt{};
  opt.num_threads = in.ConsumeIntegralInRange(-2, 3);
  int rc = facts.varlen ? attnc_rt_run(&desc, t, &opt)
                        : attnc_rt_launch(&desc, t[Q], t[K], t[V], t[Out], t[Lse], &opt);
  if (rc < ATTNC_OK || rc > ATTNC_ERR_INDEX || (rc != ATTNC_OK && !*attnc_last_error()))
    __builtin_trap(); // an undefined status, or an error without a message
  if (rc == ATTNC_OK && gTouch) {
    bool lse = facts.outputs & 2;
    for (int i : {Q, K, V, CuQ, CuKv, KvLens})
      if (i < used && (overlaps(x[Out], x[i]) || (lse && t[Lse] && overlaps(x[Lse], x[i]))))
        __builtin_trap(); // an output accepted on top of an input
    if (lse && t[Lse] && overlaps(x[Out], x[Lse]))
      __builtin_trap();
  }
  return 0;
}
