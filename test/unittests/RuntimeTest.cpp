//===- RuntimeTest.cpp - Unit tests for the CPU kernel runtime ------------===//
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
// descriptor's dtype (float32, float16 or bfloat16) and lse in float32.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Runtime/ElementCodec.h"
#include "attnc/Runtime/KernelDescFields.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

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

std::string dtypeLabel(DLDataType type) {
  return type.bits == 32 ? "float32" : type.code == kDLBfloat ? "bfloat16" : "float16";
}

// What the fake tile function records; reset by the fixture.
std::mutex gMutex;
std::map<std::array<int64_t, 3>, int> gVisits; // (b, h, q_tile) -> count
std::set<std::thread::id> gThreads;
attnc_memref gViews[5];
std::atomic<int> gBad{0};                        // broken memref invariants
std::atomic<const attnc_kernel_desc *> gDesc{nullptr};
std::array<int64_t, 3> gFailAt = {-1, -1, -1};   // this item returns 7

/// The flat index of element (i0, i1, i2, d) of `m`, given the element strides
/// of i0..i2 (head_dim is contiguous); flags indices outside the view.
int64_t flatIndex(const attnc_memref &m, const int64_t *strides, int64_t i0,
                  int64_t i1, int64_t i2, int64_t d) {
  int64_t i = i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + d;
  if (i < 0 || i >= m.size)
    ++gBad;
  return i;
}

int32_t fakeTile(attnc_memref *q, attnc_memref *k, attnc_memref *v,
                 attnc_memref *out, attnc_memref *lse, attnc_memref_i64 *params,
                 int64_t b, int64_t h, int64_t tile) {
  const attnc_kernel_desc &d = *gDesc.load();
  DLDataType type = {uint8_t(d.dtype_code), uint8_t(d.dtype_bits), 1};
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
  const int64_t *p = params->aligned + params->offset;
  int64_t sq = p[ATTNC_P_SEQ_Q], skv = p[ATTNC_P_SEQ_KV];
  int64_t g = h / (d.num_heads / d.num_kv_heads);
  for (int64_t s = tile * d.block_q; s < std::min(sq, (tile + 1) * d.block_q); ++s) {
    for (int64_t c = 0; c < d.head_dim; ++c) {
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
int gGridCalls = 0;
int64_t gGridBatch = -1, gGridDevice = -1;
void *gGridStream = nullptr;
int32_t gGridCode = 0; // returned instead of running

int32_t fakeGrid(attnc_memref *q, attnc_memref *k, attnc_memref *v, attnc_memref *out,
                 attnc_memref *lse, attnc_memref_i64 *params, int64_t batch,
                 int64_t deviceId, void *stream) {
  ++gGridCalls;
  gGridBatch = batch;
  gGridDevice = deviceId;
  gGridStream = stream;
  if (gGridCode)
    return gGridCode;
  const attnc_kernel_desc &d = *gDesc.load();
  int64_t seqQ = params->aligned[ATTNC_P_SEQ_Q];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < d.num_heads; ++h)
      for (int64_t t = 0; t * d.block_q < seqQ; ++t)
        if (int32_t rc = fakeTile(q, k, v, out, lse, params, b, h, t))
          return rc;
  return 0;
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
  attnc_kernel_desc desc = {};
  Tensor q, k, v, out, lse;

  Problem(int layout = 0, Dims dims = {}, bool withLse = true,
          DLDataType dtype = kF32)
      : n(dims) {
    // By field name, as attn-emit-cpu-entry fills it.
    desc.abi_version = ATTNC_ABI_VERSION;
    desc.device_type = kDLCPU;
    desc.num_heads = int32_t(n.heads);
    desc.num_kv_heads = int32_t(n.kvHeads);
    desc.head_dim = int32_t(n.dim);
    desc.dtype_code = dtype.code;
    desc.dtype_bits = dtype.bits;
    desc.layout = layout;
    desc.outputs = withLse ? 3 : 1;
    desc.block_q = int32_t(n.blockQ);
    desc.name = "fake";
    desc.tile = fakeTile;
    q = tensor(n.heads, n.seqQ);
    k = tensor(n.kvHeads, n.seqKV);
    v = tensor(n.kvHeads, n.seqKV);
    out = tensor(n.heads, n.seqQ);
    lse = Tensor({n.batch, n.heads, n.seqQ}); // float32 for every dtype
    fill();
  }
  DLDataType dtype() const {
    return {uint8_t(desc.dtype_code), uint8_t(desc.dtype_bits), 1};
  }
  /// A q / k / v / out tensor in the kernel's layout and dtype.
  Tensor tensor(int64_t heads, int64_t seq, std::vector<int64_t> strides = {},
                int64_t offset = 0) const {
    return Tensor(shape(heads, seq), std::move(strides), offset, dtype());
  }
  std::vector<int64_t> shape(int64_t heads, int64_t seq) const {
    if (desc.layout == 1)
      return {n.batch, seq, heads, n.dim};
    return {n.batch, heads, seq, n.dim};
  }
  /// The index of element (b, h, s, d) of a 4-d tensor in the descriptor's
  /// layout.
  std::array<int64_t, 4> at(int64_t b, int64_t h, int64_t s, int64_t d) const {
    return desc.layout == 1 ? std::array<int64_t, 4>{b, s, h, d}
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
    desc.tile = nullptr;
    desc.grid = fakeGrid;
    for (Tensor *t : {&q, &k, &v, &out, &lse})
      t->dl.device = {kDLCUDA, 0};
  }
  bool drop[5] = {}; // pass q, k, v, out, lse as NULL
  bool dropDesc = false;
  int run(int threads = 0, void *stream = nullptr) {
    gDesc = &desc;
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
          if (desc.outputs & 2) {
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
    gFailAt = {-1, -1, -1};
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

/// Every layout with every kernel dtype: q, k, v and out in the dtype, lse
/// in float32.
class Kinds : public Runtime,
              public ::testing::WithParamInterface<std::tuple<int, DLDataType>> {};

TEST_P(Kinds, Run) {
  auto [layout, dtype] = GetParam();
  Problem p(layout, {}, /*withLse=*/true, dtype);
  ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
  p.expectOutputs();
  p.expectEachItemOnce();
  EXPECT_EQ(gViews[0].size, p.q.elements()); // in elements, not bytes
  EXPECT_EQ(gViews[4].size, p.lse.elements());
}

INSTANTIATE_TEST_SUITE_P(Runtime, Kinds,
                         ::testing::Combine(::testing::Values(0, 1),
                                            ::testing::Values(kF32, kF16, kBF16)),
                         [](const auto &c) {
                           return std::string(std::get<0>(c.param) ? "bshd" : "bhsd") +
                                  "_" + dtypeLabel(std::get<1>(c.param));
                         });

TEST_F(Runtime, HonoursPaddedStridesAndByteOffset) {
  for (DLDataType dtype : {kF32, kF16, kBF16})
    for (int layout : {0, 1}) {
      SCOPED_TRACE(dtypeLabel(dtype) + (layout ? " bshd" : " bhsd"));
      Problem p(layout, {}, /*withLse=*/true, dtype);
      // Rows padded by 2, dimension 1 by 3, batches by 5 elements; the data
      // starts 3 elements in (a byte_offset of 6 bytes for the 16-bit dtypes:
      // a multiple of their size, not of 4).
      int64_t dim1 = p.q.shape[1], dim2 = p.q.shape[2], row = p.n.dim + 2;
      int64_t step1 = dim2 * row + 3;
      std::vector<int64_t> strides = {dim1 * step1 + 5, step1, row, 1};
      p.q = p.tensor(p.n.heads, p.n.seqQ, strides, 3);
      p.out = p.tensor(p.n.heads, p.n.seqQ, strides, 3);
      p.v = p.tensor(p.n.kvHeads, p.n.seqKV, {}, 1);
      p.lse = Tensor({p.n.batch, p.n.heads, p.n.seqQ}, {p.n.heads * 8, 8, 1}, 2);
      p.fill();
      ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
      p.expectOutputs();
      // A view spans exactly the reachable elements, from data + byte_offset.
      EXPECT_EQ(gViews[0].aligned, p.q.element(3));
      EXPECT_EQ(gViews[0].size, p.q.elements() - 3);
      EXPECT_EQ(gViews[2].size, p.v.elements() - 1);
      EXPECT_EQ(gViews[4].aligned, p.lse.element(2));
      EXPECT_EQ(p.out.written(),
                p.n.batch * p.n.heads * p.n.seqQ * p.n.dim); // no padding
    }
}

// Alignment is to the element size: a 16-bit tensor whose data is 2 modulo 4
// bytes is fine (the float32 one is refused, see the MisalignedData error).
TEST_F(Runtime, SixteenBitDataNeedsOnlyTwoByteAlignment) {
  for (DLDataType dtype : {kF16, kBF16}) {
    SCOPED_TRACE(dtypeLabel(dtype));
    Problem p(0, {}, /*withLse=*/true, dtype);
    p.q = p.tensor(p.n.heads, p.n.seqQ, {}, 1);
    p.q.offsetThroughData();
    p.fill();
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p.q.dl.data) % 4, 2u);
    ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
    p.expectOutputs();
    EXPECT_EQ(gViews[0].aligned, p.q.dl.data);
  }
}

TEST_F(Runtime, HeadDimOfOneIgnoresItsStride) {
  Dims dims;
  dims.dim = 1;
  Problem p(0, dims);
  p.q = Tensor(p.shape(p.n.heads, p.n.seqQ), {20, 5, 1, 9});
  p.fill();
  ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
  p.expectOutputs();
}

TEST_F(Runtime, LseNotRequestedIsIgnored) {
  Problem p(0, {}, /*withLse=*/false);
  p.drop[4] = true;
  ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(gViews[4].aligned, nullptr);
  EXPECT_EQ(gViews[4].size, 0);
  // A given lse is neither checked nor written.
  p.lse.dl.dtype.bits = 16;
  p.drop[4] = false;
  ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(p.lse.written(), 0);
  p.expectOutputs();
}

// attn-emit-cpu-entry lays the descriptor out from kKernelDescFields as an
// LLVM struct: natural alignment, i32 = 4 bytes, i64 and ptr = 8 (x86-64).
// The C compiler lays out the struct generated from the same list; the two
// must put every field at the same offset.
TEST(KernelDesc, TableMatchesTheCStruct) {
  const size_t offsets[] = {
#define FIELD_OFFSET(type, field) offsetof(attnc_kernel_desc, field),
      ATTNC_KERNEL_DESC_FIELDS(FIELD_OFFSET)
#undef FIELD_OFFSET
  };
  ASSERT_EQ(std::size(attnc::kKernelDescFields), std::size(offsets));
  size_t offset = 0;
  for (size_t i = 0; i < std::size(offsets); ++i) {
    const attnc::DescField &f = attnc::kKernelDescFields[i];
    size_t bytes = f.kind == attnc::DescFieldKind::I32 ? 4 : 8;
    offset = (offset + bytes - 1) / bytes * bytes;
    EXPECT_EQ(offsets[i], offset) << f.name;
    offset += bytes;
  }
  EXPECT_EQ(sizeof(attnc_kernel_desc), (offset + 7) / 8 * 8);
  // The runtime reads abi_version before trusting anything else.
  EXPECT_STREQ(attnc::kKernelDescFields[0].name, "abi_version");
  EXPECT_EQ(offsetof(attnc_kernel_desc, abi_version), 0u);
}

/// A mistake in the arguments: how to make it, and what the runtime says.
struct ErrorCase {
  const char *name;
  void (*mutate)(Problem &);
  int status;
  const char *text; // a substring of the message
  int layout = 0;
  DLDataType dtype = kF32; // the kernel's
};

const ErrorCase kErrors[] = {
    {"NullTensor", [](Problem &p) { p.drop[1] = true; }, ATTNC_ERR_NULL,
     "kernel 'fake': k is NULL; pass a float32 CPU tensor (bhsd: batch, "
     "kv_heads, seq_kv, head_dim)"},
    {"NullData", [](Problem &p) { p.v.dl.data = nullptr; }, ATTNC_ERR_NULL,
     "kernel 'fake': v has NULL data"},
    {"LseMissing", [](Problem &p) { p.drop[4] = true; }, ATTNC_ERR_NULL,
     "kernel 'fake': lse is NULL, but this kernel outputs the log-sum-exp"},
    {"Dtype", [](Problem &p) { p.q.dl.dtype.bits = 16; }, ATTNC_ERR_DTYPE,
     "q has dtype float16 but needs float32 (kDLFloat, 32 bits, 1 lane)"},
    {"DtypeBfloat", [](Problem &p) { p.v.dl.dtype = {kDLBfloat, 16, 1}; },
     ATTNC_ERR_DTYPE, "kernel 'fake': v has dtype bfloat16 but needs float32 "
     "(kDLFloat, 32 bits, 1 lane)"},
    // Same bits, other code: the code is checked, not just the width.
    {"DtypeCode", [](Problem &p) { p.q.dl.dtype = {kDLInt, 32, 1}; },
     ATTNC_ERR_DTYPE, "q has dtype int32 but needs float32 (kDLFloat"},
    {"Lanes", [](Problem &p) { p.k.dl.dtype.lanes = 4; }, ATTNC_ERR_DTYPE,
     "k has dtype float32 x 4 lanes but needs float32"},
    {"Device", [](Problem &p) { p.out.dl.device = {kDLCUDA, 1}; }, ATTNC_ERR_DEVICE,
     "kernel 'fake': out is on device kDLCUDA (2), id 1, but this kernel runs "
     "on kDLCPU (1) and accepts only kDLCPU tensors; copy it to host memory "
     "first"},
    {"DeviceCudaHost", [](Problem &p) { p.q.dl.device = {kDLCUDAHost, 0}; },
     ATTNC_ERR_DEVICE, "q is on device kDLCUDAHost (3)"},
    {"Rank", [](Problem &p) { p.q.dl.ndim = 3; }, ATTNC_ERR_SHAPE,
     "q has 3 dimensions but needs 4 (bhsd: batch, heads, seq_q, head_dim)"},
    {"HeadCount", [](Problem &p) { p.k = Tensor({2, 4, 3, 4}); }, ATTNC_ERR_SHAPE,
     "kernel 'fake': k has shape [2, 4, 3, 4] but needs [2, 2, seq_kv, 4] "
     "(bhsd: batch, kv_heads, seq_kv, head_dim)"},
    {"HeadCountBshd", [](Problem &p) { p.q = Tensor({2, 5, 3, 4}); }, ATTNC_ERR_SHAPE,
     "q has shape [2, 5, 3, 4] but needs [batch, seq_q, 4, 4] (bshd: batch, "
     "seq_q, heads, head_dim)", 1},
    {"NegativeBatch", [](Problem &p) { p.q = Tensor({-1, 4, 5, 4}); }, ATTNC_ERR_SHAPE,
     "q has shape [-1, 4, 5, 4] but needs [batch, 4, seq_q, 4] with batch >= 0"},
    {"KVMismatch", [](Problem &p) { p.v = Tensor({2, 2, 4, 4}); }, ATTNC_ERR_SHAPE,
     "v has shape [2, 2, 4, 4] but needs [2, 2, 3, 4], the shape of k"},
    {"OutShape", [](Problem &p) { p.out = Tensor({2, 4, 6, 4}); }, ATTNC_ERR_SHAPE,
     "out has shape [2, 4, 6, 4] but needs [2, 4, 5, 4], the shape of q"},
    {"LseShape", [](Problem &p) { p.lse = Tensor({2, 4, 4}); }, ATTNC_ERR_SHAPE,
     "lse has shape [2, 4, 4] but needs [2, 4, 5] (batch, heads, seq_q)"},
    {"MaxSeqQ", [](Problem &p) { p.desc.max_seq_q = 4; }, ATTNC_ERR_LIMIT,
     "q has seq_q = 5 but the kernel was compiled for at most max_seq_q = 4"},
    {"MaxSeqKV", [](Problem &p) { p.desc.max_seq_kv = 2; }, ATTNC_ERR_LIMIT,
     "k and v have seq_kv = 3 but the kernel was compiled for at most "
     "max_seq_kv = 2"},
    {"HeadDimStride", [](Problem &p) { p.q = Tensor({2, 4, 5, 4}, {160, 40, 8, 2}); },
     ATTNC_ERR_STRIDE, "q has strides [160, 40, 8, 2] but its last dimension "
     "(head_dim) must have stride 1"},
    {"NegativeStride", [](Problem &p) { p.k.strides = {24, 12, -4, 1};
                                        p.k.dl.strides = p.k.strides.data(); },
     ATTNC_ERR_STRIDE, "k has strides [24, 12, -4, 1] with a negative stride in "
     "dimension 2; all strides must be >= 0"},
    {"ByteOffset", [](Problem &p) { p.q.dl.byte_offset = 2; }, ATTNC_ERR_STRIDE,
     "q has byte_offset 2, which is not a multiple of the element size (4 bytes)"},
    {"Abi", [](Problem &p) { p.desc.abi_version = ATTNC_ABI_VERSION + 1; },
     ATTNC_ERR_ABI, "attnc_rt_launch: the kernel was built for runtime ABI "
     "version 4 but this runtime implements version 3"},
    {"AbiVersion2", [](Problem &p) { p.desc.abi_version = 2; }, ATTNC_ERR_ABI,
     "the kernel was built for runtime ABI version 2 but this runtime "
     "implements version 3; rebuild the kernel with a matching attnc"},
    // Of several mistakes, the most basic category is reported.
    {"FirstCategoryWins", [](Problem &p) { p.q.dl.device = {kDLCUDA, 0};
                                           p.q.dl.byte_offset = 2; },
     ATTNC_ERR_DEVICE, "q is on device kDLCUDA"},
    {"NullDesc", [](Problem &p) { p.dropDesc = true; }, ATTNC_ERR_ABI,
     "attnc_rt_launch: the kernel descriptor is NULL"},
    {"MalformedDesc", [](Problem &p) { p.desc.block_q = 0; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: head_dim = 4 and block_q = 0 must be >= 1"},
    {"CudaDesc", [](Problem &p) { p.desc.device_type = kDLCUDA; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: device_type = kDLCUDA (2), but this "
     "runtime only launches kDLCPU (1) kernels, and grid kernels on kDLCUDA (2)"},
    {"TileAndGrid", [](Problem &p) { p.desc.grid = fakeGrid; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: it must have one of a tile function "
     "and a grid function"},
    {"NeitherTileNorGrid", [](Problem &p) { p.desc.tile = nullptr; }, ATTNC_ERR_ABI,
     "malformed descriptor: it must have one of a tile function and a grid function"},
    // Outputs that would alias (issue 15's hostile calls): checked from shapes and strides.
    {"OutOverlapsK", [](Problem &p) { p.out.dl.data = p.k.dl.data; }, ATTNC_ERR_ALIAS,
     "kernel 'fake': out overlaps k in memory (their address ranges intersect); outputs must "
     "not share memory with each other or with an input, and the kernel does not run in place"},
    {"InPlace", [](Problem &p) { p.out.dl.data = p.q.dl.data; }, ATTNC_ERR_ALIAS,
     "out overlaps q in memory"},
    {"LseInsideOut", [](Problem &p) { p.lse.dl.data = p.out.element(8); }, ATTNC_ERR_ALIAS,
     "out overlaps lse in memory"},
    {"LseOverlapsV", [](Problem &p) { p.lse.dl.data = p.v.dl.data; }, ATTNC_ERR_ALIAS,
     "lse overlaps v in memory"},
    {"OutZeroStride", [](Problem &p) { p.out = Tensor({2, 4, 5, 4}, {80, 20, 0, 1}); },
     ATTNC_ERR_ALIAS, "kernel 'fake': out has shape [2, 4, 5, 4] and strides [80, 20, 0, 1], "
     "which map different elements to one address; an output needs distinct addresses (e.g. "
     "strides [80, 20, 4, 1])"},
    {"LseOverlappingRows", [](Problem &p) { p.lse = Tensor({2, 4, 5}, {20, 2, 1}); },
     ATTNC_ERR_ALIAS, "lse has shape [2, 4, 5] and strides [20, 2, 1], which map different "
     "elements to one address"},
    {"ByteOffsetWraps", [](Problem &p) { p.q.dl.byte_offset = UINT64_MAX - 3; },
     ATTNC_ERR_STRIDE, "kernel 'fake': q's data + byte_offset 18446744073709551612 wraps "
     "around the end of the address space"},
    {"HugeSeqOfZeroStrides", [](Problem &p) {
       for (Tensor *x : {&p.q, &p.out}) {
         x->shape[2] = int64_t(1) << 62;
         x->strides = {0, 0, 0, 1};
         x->dl.strides = x->strides.data();
       }
       p.lse.shape[2] = int64_t(1) << 62; },
     ATTNC_ERR_LIMIT, "kernel 'fake': seq_q = 4611686018427387904 and seq_kv = 3 must be at "
     "most 2^32 (4294967296)"},
    // A kernel runs on one device.
    {"CudaDevicesDiffer", [](Problem &p) { p.makeCudaGrid(); p.v.dl.device.device_id = 1; },
     ATTNC_ERR_DEVICE, "kernel 'fake': v is on kDLCUDA device 1 but q on device 0; "
     "a kernel runs on one device, with every tensor there"},
    {"Float64Desc", [](Problem &p) { p.desc.dtype_bits = 64; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: dtype_code = 2 and dtype_bits = 64, "
     "but this runtime only runs float32 (kDLFloat = 2, 32 bits), float16 "
     "(kDLFloat = 2, 16 bits) and bfloat16 (kDLBfloat = 4, 16 bits) kernels"},
    // Code and bits are checked as a pair.
    {"Bfloat32Desc", [](Problem &p) { p.desc.dtype_code = kDLBfloat; },
     ATTNC_ERR_ABI, "malformed descriptor: dtype_code = 4 and dtype_bits = 32, "
     "but this runtime only runs float32"},
    // A float32 tensor whose data is 2 bytes off alignment.
    {"MisalignedData", [](Problem &p) { p.q.dl.data = p.q.element(0) + 2; },
     ATTNC_ERR_STRIDE, "kernel 'fake': q's first element (data + byte_offset) is "
     "not aligned to 4 bytes, the size of its float32 elements"},
    // 16-bit kernels: q, k, v and out in the kernel's dtype, lse in float32.
    {"Bf16NullTensor", [](Problem &p) { p.drop[1] = true; }, ATTNC_ERR_NULL,
     "kernel 'fake': k is NULL; pass a bfloat16 CPU tensor (bhsd: batch, "
     "kv_heads, seq_kv, head_dim)", 0, kBF16},
    {"Bf16LseMissing", [](Problem &p) { p.drop[4] = true; }, ATTNC_ERR_NULL,
     "kernel 'fake': lse is NULL, but this kernel outputs the log-sum-exp and "
     "needs a float32 tensor for it (batch, heads, seq_q)", 0, kBF16},
    {"Bf16KernelFloat32Input", [](Problem &p) { p.q.dl.dtype = kF32; },
     ATTNC_ERR_DTYPE, "kernel 'fake': q has dtype float32 but needs bfloat16 "
     "(kDLBfloat, 16 bits, 1 lane)", 0, kBF16},
    {"Bf16KernelFloat16Out", [](Problem &p) { p.out.dl.dtype = kF16; },
     ATTNC_ERR_DTYPE, "out has dtype float16 but needs bfloat16 (kDLBfloat, 16 "
     "bits, 1 lane)", 1, kBF16},
    // Same width, other code.
    {"F16KernelBfloat16Input", [](Problem &p) { p.v.dl.dtype = kBF16; },
     ATTNC_ERR_DTYPE, "kernel 'fake': v has dtype bfloat16 but needs float16 "
     "(kDLFloat, 16 bits, 1 lane)", 0, kF16},
    {"F16KernelFloat32Input", [](Problem &p) { p.k.dl.dtype = kF32; },
     ATTNC_ERR_DTYPE, "k has dtype float32 but needs float16", 0, kF16},
    {"Bf16LseInKernelDtype", [](Problem &p) { p.lse.dl.dtype = kBF16; },
     ATTNC_ERR_DTYPE, "kernel 'fake': lse has dtype bfloat16 but needs float32 "
     "(kDLFloat, 32 bits, 1 lane): the log-sum-exp is float32 whatever the "
     "kernel's dtype", 0, kBF16},
    {"F16LseInKernelDtype", [](Problem &p) { p.lse.dl.dtype = kF16; },
     ATTNC_ERR_DTYPE, "lse has dtype float16 but needs float32", 0, kF16},
    {"Bf16ByteOffset", [](Problem &p) { p.q.dl.byte_offset = 3; },
     ATTNC_ERR_STRIDE, "q has byte_offset 3, which is not a multiple of the "
     "element size (2 bytes)", 0, kBF16},
    {"F16MisalignedData", [](Problem &p) { p.v.dl.data = p.v.element(0) + 1; },
     ATTNC_ERR_STRIDE, "v's first element (data + byte_offset) is not aligned "
     "to 2 bytes, the size of its float16 elements", 0, kF16},
    // lse keeps float32's 4-byte element size in a 16-bit kernel.
    {"Bf16LseByteOffset", [](Problem &p) { p.lse.dl.byte_offset = 2; },
     ATTNC_ERR_STRIDE, "lse has byte_offset 2, which is not a multiple of the "
     "element size (4 bytes)", 0, kBF16},
    {"Bf16LseMisaligned", [](Problem &p) { p.lse.dl.data = p.lse.element(0) + 2; },
     ATTNC_ERR_STRIDE, "lse's first element (data + byte_offset) is not aligned "
     "to 4 bytes, the size of its float32 elements", 0, kBF16},
};

void PrintTo(const ErrorCase &c, std::ostream *os) { *os << c.name; }

class Errors : public Runtime, public ::testing::WithParamInterface<ErrorCase> {};

TEST_P(Errors, FailBeforeTouchingData) {
  Problem p(GetParam().layout, {}, /*withLse=*/true, GetParam().dtype);
  GetParam().mutate(p);
  expectError(p, GetParam().status, GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(Runtime, Errors, ::testing::ValuesIn(kErrors),
                         [](const auto &c) { return c.param.name; });

TEST_F(Runtime, ErrorKernelFailure) {
  Problem p;
  gFailAt = {1, 2, 1};
  EXPECT_EQ(p.run(1), ATTNC_ERR_KERNEL);
  EXPECT_STREQ(attnc_last_error(), "kernel 'fake' failed with code 7 on work item "
               "(b=1, h=2, q_tile=1, query rows 2..3): a score_mod or mask_mod failed, "
               "e.g. an integer division by zero; out and lse are partly written");
  // One thread claims items in order and stops at the failing one.
  EXPECT_EQ(int64_t(gVisits.size()), (1 * 4 + 2) * 3 + 1 + 1);
  EXPECT_EQ(p.run(0), ATTNC_ERR_KERNEL);
}

// Empty launches, as PyTorch allows them (issue 15's numerical edges).
TEST_F(Runtime, EmptyBatchOrQueriesRunNothing) {
  for (Dims dims : {Dims{0, 4, 2, 5, 3, 4, 2}, Dims{2, 4, 2, 0, 3, 4, 2}}) {
    Problem p(0, dims);
    ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
    EXPECT_TRUE(gVisits.empty());
  }
}

TEST_F(Runtime, EmptyKeysGiveZeroOutAndMinusInfinityLse) {
  Problem p(1, Dims{2, 4, 2, 5, 0, 4, 2});
  ASSERT_EQ(p.run(), ATTNC_OK) << attnc_last_error();
  EXPECT_TRUE(gVisits.empty());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t s = 0; s < 5; ++s) {
        for (int64_t d = 0; d < 4; ++d)
          EXPECT_EQ(p.out.at(p.at(b, h, s, d)), 0.0f);
        EXPECT_EQ(p.lse.at({b, h, s, 0}), -std::numeric_limits<float>::infinity());
      }
  // Not on a CUDA kernel: its outputs are device memory.
  p.makeCudaGrid();
  EXPECT_EQ(p.run(), ATTNC_ERR_SHAPE);
  EXPECT_STREQ(attnc_last_error(), "kernel 'fake': k and v have seq_kv = 0, which a kDLCUDA "
               "kernel does not take (on the CPU every row gets out = 0 and lse = -inf)");
}

TEST_F(Runtime, GridKernelRunsOnceWithTheStream) {
  Problem p;
  p.makeCudaGrid();
  gGridCalls = 0;
  int stream = 0;
  ASSERT_EQ(p.run(2, &stream), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(gGridCalls, 1);
  EXPECT_EQ(gGridBatch, p.n.batch);
  EXPECT_EQ(gGridDevice, 0);
  EXPECT_EQ(gGridStream, &stream);
  // On the caller's thread only.
  EXPECT_EQ(gThreads.size(), 1u);
  EXPECT_EQ(int64_t(gVisits.size()), p.items());
  p.expectOutputs();
}

TEST_F(Runtime, GridKernelFailure) {
  Problem p;
  p.makeCudaGrid();
  gGridCode = -1;
  EXPECT_EQ(p.run(), ATTNC_ERR_KERNEL);
  gGridCode = 0;
  EXPECT_STREQ(attnc_last_error(),
               "kernel 'fake' failed with code -1: the kernel's Halide pipeline returned this "
               "Halide error code, e.g. a score_mod or mask_mod dividing by zero, or a failed "
               "device call (its message went to stderr); out and lse may be partly written");
}

TEST_F(Runtime, ErrorIsPerThreadAndClearedBySuccess) {
  Problem p;
  p.q.dl.ndim = 2;
  EXPECT_EQ(p.run(), ATTNC_ERR_SHAPE);
  std::string other = "unset";
  std::thread([&] { other = attnc_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(attnc_last_error()).find("q has 2 dimensions"),
            std::string::npos);
  p.q.dl.ndim = 4;
  EXPECT_EQ(p.run(), ATTNC_OK);
  EXPECT_STREQ(attnc_last_error(), "");
}

class Threads : public Runtime, public ::testing::WithParamInterface<int> {};

TEST_P(Threads, VisitsEachItemOnceOnBoundedThreads) {
  Problem p;
  ASSERT_EQ(p.run(GetParam()), ATTNC_OK) << attnc_last_error();
  p.expectOutputs();
  p.expectEachItemOnce();
  int64_t cap = GetParam() > 0 ? GetParam() : std::thread::hardware_concurrency();
  EXPECT_LE(int64_t(gThreads.size()), std::min(cap, p.items()));
  if (GetParam() == 1) {
    EXPECT_EQ(*gThreads.begin(), std::this_thread::get_id());
  }
}

INSTANTIATE_TEST_SUITE_P(Runtime, Threads, ::testing::Values(1, 2, 0, 64),
                         [](const auto &c) {
                           return c.param ? std::to_string(c.param) : "AllCores";
                         });

TEST_F(Runtime, NeverMoreThreadsThanItems) {
  Dims dims;
  dims.batch = dims.heads = dims.kvHeads = 1;
  dims.seqQ = dims.blockQ;
  Problem p(0, dims);
  ASSERT_EQ(p.run(8), ATTNC_OK) << attnc_last_error();
  ASSERT_EQ(gThreads.size(), 1u);
  EXPECT_EQ(*gThreads.begin(), std::this_thread::get_id());
}

TEST_F(Runtime, ConcurrentCallers) {
  // The problems outlive every caller: the fake tile reads the last-set gDesc.
  std::vector<Problem> problems(4);
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (Problem &problem : problems)
    callers.emplace_back([&failures, p = &problem] {
      for (int i = 0; i < 25; ++i) {
        p->out = Tensor(p->shape(p->n.heads, p->n.seqQ));
        failures += p->run(2) != ATTNC_OK;
        p->expectOutputs();
      }
    });
  for (std::thread &t : callers)
    t.join();
  EXPECT_EQ(failures.load(), 0);
}

std::vector<Problem> *gInner = nullptr;

/// A tile function that launches a whole kernel of its own, one per head.
int32_t nestingTile(attnc_memref *, attnc_memref *, attnc_memref *,
                    attnc_memref *, attnc_memref *, attnc_memref_i64 *, int64_t,
                    int64_t h, int64_t) {
  return (*gInner)[h].run(2);
}

TEST_F(Runtime, KernelMayLaunchAKernel) {
  std::vector<Problem> inner(4);
  gInner = &inner;
  Dims dims;
  dims.batch = 1;
  dims.heads = dims.kvHeads = 4;
  Problem outer(0, dims);
  outer.desc.tile = nestingTile;
  outer.desc.block_q = int32_t(dims.seqQ); // one item per head
  // Nested launches run on the calling thread instead of deadlocking.
  ASSERT_EQ(outer.run(2), ATTNC_OK) << attnc_last_error();
  for (Problem &p : inner)
    p.expectOutputs();
}

TEST_F(Runtime, ForkedChildCanLaunch) {
  Problem p;
  ASSERT_EQ(p.run(2), ATTNC_OK); // the parent's pool exists now
  pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(20); // a hang (a pool without threads) becomes a failure
    Problem c;
    bool ok = c.run(2) == ATTNC_OK && c.out.at({1, 3, 4, 3}) != kSentinel;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(p.run(2), ATTNC_OK); // and the parent's pool still works
}

} // namespace
