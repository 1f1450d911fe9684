//===- RuntimeTestSupport.h - the runtime tests' fake kernel ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A fake kernel stands in for a compiled one: its tile function computes
// out = 2 * q + h + k[last row] + v[last row] and lse = 100 * h + row, reading
// every address from the memrefs and params alone, so a wrong offset, stride
// or view size in the runtime shows up as a wrong value or a flagged
// out-of-range access. It also records which thread ran which work item.
// Like a compiled kernel, it reads q, k, v and writes out in the
// descriptor's dtype (float32, float16 or bfloat16) and lse in float32. Its
// grid function runs every item through the tile function. Problem builds a
// launch's descriptor and tensors; Runtime is the fixture that resets what
// the fakes record.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_UNITTESTS_RUNTIMETESTSUPPORT_H
#define ATTNC_TEST_UNITTESTS_RUNTIMETESTSUPPORT_H

#include "attnc/Interface/KernelInterface.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Runtime/ElementCodec.h"
#include "attnc/Runtime/KernelDescFields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace attnc::runtime_test {

using attnc::elementBytes;
using attnc::loadElement;
using attnc::storeElement;

// Never produced by the fake kernel. It and every value the tests store are
// integers of at most 8 significant bits, exact in float16 and bfloat16, so
// storing and loading them (ElementCodec.h) never rounds.
constexpr float kSentinel = -1000.0f;

constexpr DLDataType kF32 = {kDLFloat, 32, 1};
constexpr DLDataType kF16 = {kDLFloat, 16, 1};
constexpr DLDataType kBF16 = {kDLBfloat, 16, 1};

inline std::string dtypeLabel(DLDataType type) {
  return type.bits == 32 ? "float32" : type.code == kDLBfloat ? "bfloat16" : "float16";
}

// What the fake tile function records; reset by the fixture.
inline std::mutex gMutex;
inline std::map<std::array<int64_t, 3>, int> gVisits; // (b, h, q_tile) -> count
inline std::set<std::thread::id> gThreads;
inline attnc_memref gViews[5];
inline std::atomic<int> gBad{0};                        // broken memref invariants
inline std::atomic<const AttentionFacts *> gFacts{nullptr}; // the running Problem's
inline std::array<int64_t, 3> gFailAt = {-1, -1, -1};   // this item returns 7
inline std::array<int64_t, 3> gFailAlso = {-1, -1, -1}; // and this one, 50 ms late

/// The flat index of element (i0, i1, i2, d) of `m`, given the element strides
/// of i0..i2 (head_dim is contiguous); flags indices outside the view.
inline int64_t flatIndex(const attnc_memref &m, const int64_t *strides, int64_t i0,
                  int64_t i1, int64_t i2, int64_t d) {
  int64_t i = i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + d;
  if (i < 0 || i >= m.size)
    ++gBad;
  return i;
}

inline int32_t fakeTile(attnc_memref *q, attnc_memref *k, attnc_memref *v,
                 attnc_memref *out, attnc_memref *lse, attnc_memref_i64 *params,
                 int64_t b, int64_t h, int64_t tile) {
  const AttentionFacts &d = *gFacts.load();
  DLDataType type = {uint8_t(d.dtypeCode), uint8_t(d.dtypeBits), 1};
  {
    std::lock_guard<std::mutex> lock(gMutex);
    ++gVisits[{b, h, tile}];
    gThreads.insert(std::this_thread::get_id());
    attnc_memref *views[5] = {q, k, v, out, lse};
    for (int i = 0; i < 5; ++i) {
      gViews[i] = *views[i];
      if (views[i]->allocated != views[i]->aligned || views[i]->offset != 0 ||
          views[i]->stride != 1)
        ++gBad;
    }
  }
  if (std::array<int64_t, 3>{b, h, tile} == gFailAt)
    return 7;
  if (std::array<int64_t, 3>{b, h, tile} == gFailAlso) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return 7;
  }
  const int64_t *p = params->aligned + params->offset;
  int64_t sq = p[ATTNC_P_SEQ_Q], skv = p[ATTNC_P_SEQ_KV];
  int64_t g = h / (d.heads / d.kvHeads);
  for (int64_t s = tile * d.blockQ; s < std::min(sq, (tile + 1) * d.blockQ); ++s) {
    for (int64_t c = 0; c < d.headDim; ++c) {
      float qv = loadElement(
          type, q->aligned, flatIndex(*q, p + ATTNC_P_Q_STRIDES, b, h, s, c));
      float kv = loadElement(
          type, k->aligned, flatIndex(*k, p + ATTNC_P_K_STRIDES, b, g, skv - 1, c));
      float vv = loadElement(
          type, v->aligned, flatIndex(*v, p + ATTNC_P_V_STRIDES, b, g, skv - 1, c));
      storeElement(type, out->aligned,
                   flatIndex(*out, p + ATTNC_P_OUT_STRIDES, b, h, s, c),
                   2 * qv + float(h) + kv + vv);
    }
    if (lse->size > 0)
      storeElement(kF32, lse->aligned,
                   flatIndex(*lse, p + ATTNC_P_LSE_STRIDES, b, h, s, 0),
                   float(100 * h + s));
  }
  return 0;
}

/// A grid function: every work item through fakeTile, on the calling thread.
inline int gGridCalls = 0;
inline int64_t gGridBatch = -1, gGridDevice = -1;
inline void *gGridStream = nullptr;
inline int32_t gGridCode = 0; // returned instead of running

inline int32_t fakeGrid(attnc_memref *q, attnc_memref *k, attnc_memref *v, attnc_memref *out,
                 attnc_memref *lse, attnc_memref_i64 *params, int64_t batch,
                 int64_t deviceId, void *stream) {
  ++gGridCalls;
  gGridBatch = batch;
  gGridDevice = deviceId;
  gGridStream = stream;
  if (gGridCode)
    return gGridCode;
  const AttentionFacts &d = *gFacts.load();
  int64_t seqQ = params->aligned[ATTNC_P_SEQ_Q];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t t = 0; t * d.blockQ < seqQ; ++t)
        if (int32_t rc = fakeTile(q, k, v, out, lse, params, b, h, t))
          return rc;
  return 0;
}

/// A tile function as a phase's item function (what attn-emit-cpu-entry
/// writes for a compiled kernel): the views one by one, the coordinates.
template <attnc_tile_fn Tile>
int32_t itemOf(attnc_memref *t, attnc_memref_i64 *params, const int64_t *index) {
  return Tile(&t[0], &t[1], &t[2], &t[3], &t[4], params, index[0], index[1], index[2]);
}

/// A grid function as a device phase's function: the outermost extent is batch.
template <attnc_grid_fn Grid>
int32_t deviceOf(attnc_memref *t, attnc_memref_i64 *params, const int64_t *extents,
                 int64_t deviceId, void *stream) {
  return Grid(&t[0], &t[1], &t[2], &t[3], &t[4], params, extents[0], deviceId, stream);
}

/// A CPU DLTensor of `dtype` over its own storage, every element initially
/// kSentinel. Empty `strides` means compact, passed as NULL strides. Moves keep
/// the vector's buffer, so `dl` stays valid.
struct Tensor {
  std::vector<int64_t> shape, strides;
  DLDataType dtype = kF32;
  std::vector<char> storage; // elements of dtype; new'd, so 16-byte aligned
  int64_t offset = 0;        // elements skipped through byte_offset
  DLTensor dl = {};

  Tensor() = default;
  Tensor(std::vector<int64_t> shp, std::vector<int64_t> str = {}, int64_t off = 0,
         DLDataType type = kF32)
      : shape(std::move(shp)), strides(std::move(str)), dtype(type), offset(off) {
    bool compact = strides.empty();
    int n = int(shape.size());
    if (compact) {
      strides.assign(n, 1);
      for (int i = n - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    int64_t last = 0;
    for (int i = 0; i < n; ++i)
      last += (shape[i] - 1) * strides[i];
    int64_t count = std::max<int64_t>(offset + last + 1, 1); // 1 if empty
    storage.resize(count * elementBytes(dtype));
    for (int64_t i = 0; i < count; ++i)
      storeElement(dtype, storage.data(), i, kSentinel);
    dl.data = storage.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = n;
    dl.dtype = dtype;
    dl.shape = shape.data();
    dl.strides = compact ? nullptr : strides.data();
    dl.byte_offset = uint64_t(offset * elementBytes(dtype));
  }

  int64_t elements() const {
    return int64_t(storage.size()) / elementBytes(dtype);
  }
  /// The address of stored element i.
  char *element(int64_t i) {
    return storage.data() + i * elementBytes(dtype);
  }
  int64_t flat(std::array<int64_t, 4> i) const {
    int64_t flat = offset;
    for (size_t n = 0; n < shape.size(); ++n)
      flat += i[n] * strides[n];
    return flat;
  }
  float at(std::array<int64_t, 4> i) const {
    return loadElement(dtype, storage.data(), flat(i));
  }
  void set(std::array<int64_t, 4> i, float value) {
    storeElement(dtype, storage.data(), flat(i), value);
  }
  /// Stored elements that no longer hold kSentinel.
  int64_t written() const {
    int64_t n = 0;
    for (int64_t i = 0; i < elements(); ++i)
      n += loadElement(dtype, storage.data(), i) != kSentinel;
    return n;
  }
  /// Passes the skipped elements through `data` instead of byte_offset, so
  /// that `data` itself is only as aligned as the element size makes it.
  void offsetThroughData() {
    dl.data = element(offset);
    dl.byte_offset = 0;
  }
};

struct Dims {
  int64_t batch = 2, heads = 4, kvHeads = 2, seqQ = 5, seqKV = 3, dim = 4, blockQ = 2;
};

/// One launch's descriptor and tensors, inputs filled with small integers
/// (exact in float).
struct Problem {
  Dims n;
  /// The kernel's facts, which run() turns into the descriptor's tables as
  /// attn-emit-cpu-entry does (attnc::attentionInterface).
  AttentionFacts facts;
  attnc_kernel_desc desc = {};
  attnc_item_fn item = itemOf<fakeTile>; // every phase's functions
  attnc_device_fn device = nullptr;
  std::unique_ptr<InterfaceTables> tables;
  Tensor q, k, v, out, lse;

  Problem(int layout = 0, Dims dims = {}, bool withLse = true,
          DLDataType dtype = kF32)
      : n(dims) {
    facts.heads = n.heads;
    facts.kvHeads = n.kvHeads;
    facts.headDim = n.dim;
    facts.dtypeCode = dtype.code;
    facts.dtypeBits = dtype.bits;
    facts.layout = layout;
    facts.outputs = withLse ? 3 : 1;
    facts.blockQ = n.blockQ;
    desc.abi_version = ATTNC_ABI_VERSION;
    desc.device_type = kDLCPU;
    desc.name = "fake";
    q = tensor(n.heads, n.seqQ);
    k = tensor(n.kvHeads, n.seqKV);
    v = tensor(n.kvHeads, n.seqKV);
    out = tensor(n.heads, n.seqQ);
    lse = Tensor({n.batch, n.heads, n.seqQ}); // float32 for every dtype
    fill();
  }
  DLDataType dtype() const {
    return {uint8_t(facts.dtypeCode), uint8_t(facts.dtypeBits), 1};
  }
  /// A q / k / v / out tensor in the kernel's layout and dtype.
  Tensor tensor(int64_t heads, int64_t seq, std::vector<int64_t> strides = {},
                int64_t offset = 0) const {
    return Tensor(shape(heads, seq), std::move(strides), offset, dtype());
  }
  std::vector<int64_t> shape(int64_t heads, int64_t seq) const {
    if (facts.layout == 1)
      return {n.batch, seq, heads, n.dim};
    return {n.batch, heads, seq, n.dim};
  }
  /// The index of element (b, h, s, d) of a 4-d tensor in the descriptor's
  /// layout.
  std::array<int64_t, 4> at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return facts.layout == 1 ? std::array<int64_t, 4>{b, s, h, d}
                            : std::array<int64_t, 4>{b, h, s, d};
  }
  void fill() {
    for (int64_t b = 0; b < n.batch; ++b)
      for (int64_t d = 0; d < n.dim; ++d) {
        for (int64_t h = 0; h < n.heads; ++h)
          for (int64_t s = 0; s < n.seqQ; ++s)
            q.set(at(b, h, s, d), float((b * 7 + h * 5 + s * 3 + d) % 11 - 5));
        for (int64_t h = 0; h < n.kvHeads; ++h)
          for (int64_t s = 0; s < n.seqKV; ++s) {
            k.set(at(b, h, s, d), float((b * 3 + h * 2 + s + d) % 7));
            v.set(at(b, h, s, d), float((b + h * 4 + s * 2 + d) % 5 - 2));
          }
      }
  }
  /// A grid kernel on CUDA tensors (the fakes only look at host memory).
  void makeCudaGrid() {
    desc.device_type = kDLCUDA;
    facts.onDevice = true;
    item = nullptr;
    device = deviceOf<fakeGrid>;
    for (Tensor *t : {&q, &k, &v, &out, &lse})
      t->dl.device = {kDLCUDA, 0};
  }
  bool drop[5] = {}; // pass q, k, v, out, lse as NULL
  bool dropDesc = false;
  /// Lays out the tables from `facts` into `desc`.
  void describe() {
    tables = std::make_unique<InterfaceTables>(attentionInterface(facts));
    tables->fill(desc, item, device);
  }
  int run(int threads = 0, void *stream = nullptr) {
    describe();
    gFacts = &facts;
    attnc_options opt = {threads, stream};
    DLTensor *t[5] = {&q.dl, &k.dl, &v.dl, &out.dl, &lse.dl};
    for (int i = 0; i < 5; ++i)
      t[i] = drop[i] ? nullptr : t[i];
    return attnc_rt_launch(dropDesc ? nullptr : &desc, t[0], t[1], t[2], t[3],
                           t[4], &opt);
  }
  int64_t items() const {
    return n.batch * n.heads * ((n.seqQ + n.blockQ - 1) / n.blockQ);
  }
  /// Compares out (and lse, if the kernel outputs it) with the fake's formula.
  void expectOutputs() {
    int64_t group = n.heads / n.kvHeads;
    for (int64_t b = 0; b < n.batch; ++b)
      for (int64_t h = 0; h < n.heads; ++h)
        for (int64_t s = 0; s < n.seqQ; ++s) {
          for (int64_t d = 0; d < n.dim; ++d) {
            float want = 2 * q.at(at(b, h, s, d)) + float(h) +
                         k.at(at(b, h / group, n.seqKV - 1, d)) +
                         v.at(at(b, h / group, n.seqKV - 1, d));
            ASSERT_EQ(out.at(at(b, h, s, d)), want)
                << b << "," << h << "," << s << "," << d;
          }
          if (facts.outputs & 2) {
            ASSERT_EQ(lse.at({b, h, s, 0}), float(100 * h + s));
          }
        }
    EXPECT_EQ(gBad.load(), 0);
  }
  void expectEachItemOnce() {
    std::lock_guard<std::mutex> lock(gMutex);
    EXPECT_EQ(int64_t(gVisits.size()), items());
    for (auto &[item, count] : gVisits)
      EXPECT_EQ(count, 1) << item[0] << "," << item[1] << "," << item[2];
  }
};

class Runtime : public ::testing::Test {
protected:
  void SetUp() override {
    std::lock_guard<std::mutex> lock(gMutex);
    gVisits.clear();
    gThreads.clear();
    gBad = 0;
    gFailAt = gFailAlso = {-1, -1, -1};
  }
  /// A failed launch returns `status`, says `text`, and touches nothing.
  void expectError(Problem &p, int status, const std::string &text) {
    EXPECT_EQ(p.run(), status);
    std::string message = attnc_last_error();
    EXPECT_NE(message.find(text), std::string::npos) << message;
    EXPECT_TRUE(gVisits.empty());
    EXPECT_EQ(p.out.written(), 0);
  }
};

} // namespace attnc::runtime_test

#endif // ATTNC_TEST_UNITTESTS_RUNTIMETESTSUPPORT_H
