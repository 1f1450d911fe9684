//===- RuntimeTest.cpp - Unit tests for the kernel runtime's launches -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Launches that succeed, on the fake kernel of RuntimeTestSupport.h: every
// layout and dtype, strides and offsets, the descriptor's layout, empty
// launches, grid kernels, threads, concurrency, the host's parallel-for and
// fork. The refused calls are RuntimeErrorsTest.cpp's.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include <chrono>
#include <climits>

#include <sys/wait.h>
#include <unistd.h>

using namespace attnc::runtime_test;

namespace {

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

// attn-emit-cpu-entry lays the descriptor and its tables' entries out from
// kKernelDescFields (kSymbolDescFields, ...) as LLVM structs: natural
// alignment, i32 = 4 bytes, i64 and ptr = 8 (x86-64). The C compiler lays
// out the structs generated from the same lists; the two must put every
// field at the same offset.
template <size_t N>
static void expectLayout(const attnc::DescField (&fields)[N], const size_t (&offsets)[N],
                         size_t size) {
  size_t offset = 0;
  for (size_t i = 0; i < N; ++i) {
    const attnc::DescField &f = fields[i];
    size_t bytes = f.kind == attnc::DescFieldKind::I32 ? 4 : 8;
    offset = (offset + bytes - 1) / bytes * bytes;
    EXPECT_EQ(offsets[i], offset) << f.name;
    offset += bytes;
  }
  EXPECT_EQ(size, (offset + 7) / 8 * 8);
}

TEST(KernelDesc, TablesMatchTheCStructs) {
#define FIELD_OFFSET(type, field) offsetof(STRUCT, field),
#define STRUCT attnc_kernel_desc
  const size_t desc[] = {ATTNC_KERNEL_DESC_FIELDS(FIELD_OFFSET)};
#undef STRUCT
#define STRUCT attnc_symbol_desc
  const size_t symbol[] = {ATTNC_SYMBOL_DESC_FIELDS(FIELD_OFFSET)};
#undef STRUCT
#define STRUCT attnc_tensor_desc
  const size_t tensor[] = {ATTNC_TENSOR_DESC_FIELDS(FIELD_OFFSET)};
#undef STRUCT
#define STRUCT attnc_phase_desc
  const size_t phase[] = {ATTNC_PHASE_DESC_FIELDS(FIELD_OFFSET)};
#undef STRUCT
#undef FIELD_OFFSET
  expectLayout(attnc::kKernelDescFields, desc, sizeof(attnc_kernel_desc));
  expectLayout(attnc::kSymbolDescFields, symbol, sizeof(attnc_symbol_desc));
  expectLayout(attnc::kTensorDescFields, tensor, sizeof(attnc_tensor_desc));
  expectLayout(attnc::kPhaseDescFields, phase, sizeof(attnc_phase_desc));
  // The runtime reads abi_version before trusting anything else.
  EXPECT_STREQ(attnc::kKernelDescFields[0].name, "abi_version");
  EXPECT_EQ(offsetof(attnc_kernel_desc, abi_version), 0u);
}

// Multi-target dispatch: the first variant whose needs the CPU has, in the
// table's order; none fitting is ATTNC_ERR_CPU with the variants named.
static int variantA(const DLTensor *, const DLTensor *, const DLTensor *, DLTensor *, DLTensor *,
                    const attnc_options *) {
  return 100;
}
static int variantB(const DLTensor *, const DLTensor *, const DLTensor *, DLTensor *, DLTensor *,
                    const attnc_options *) {
  return 200;
}

TEST(Dispatch, PicksTheFirstVariantTheCpuRuns) {
  const int64_t never = int64_t(1) << 40; // no CPU has this bit
  attnc_variant table[] = {{"future", never, variantA}, {"baseline", 0, variantB}};
  EXPECT_EQ(attnc_rt_select_variant(table, 2, "k"), &table[1]);
  EXPECT_EQ(attnc_rt_dispatch(table, 2, "k", nullptr, nullptr, nullptr, nullptr, nullptr,
                              nullptr),
            200);
  EXPECT_EQ(attnc_rt_dispatch(table, 1, "k", nullptr, nullptr, nullptr, nullptr, nullptr,
                              nullptr),
            ATTNC_ERR_CPU);
  EXPECT_NE(std::string(attnc_last_error()).find("kernel 'k' has no variant for this CPU"),
            std::string::npos)
      << attnc_last_error();
  EXPECT_NE(std::string(attnc_last_error()).find("its variants: future"), std::string::npos);
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
  EXPECT_STREQ(attnc_last_error(), "kernel 'fake': k has seq_kv = 0, which a kDLCUDA kernel "
               "does not take (on the CPU every output gets its fill value: for attention "
               "out = 0 and lse = -inf)");
}

/// What the item functions of a two-phase kernel with scratch tensors (a
/// split-KV decode's interface) saw: phases run in order, so the first
/// items calls are the first phase's.
struct ScratchSeen {
  std::mutex mutex;
  int64_t firstPhaseItems = 0, calls = 0, merges = 0, mismatches = 0;
  attnc_memref oPart{}, lsePart{};
  int64_t oStrides[4] = {}, lseStrides[3] = {};
};
ScratchSeen *gScratch = nullptr;

/// Phase 1 writes its (b, g, split) into its lse_part slots; the merge reads
/// every split's back for its (b, h).
int32_t scratchItem(attnc_memref *t, attnc_memref_i64 *params, const int64_t *index) {
  ScratchSeen &seen = *gScratch;
  std::lock_guard<std::mutex> lock(seen.mutex);
  seen.oPart = t[5], seen.lsePart = t[6];
  const int64_t *p = static_cast<const int64_t *>(params->aligned);
  std::copy(p + ATTNC_P_O_PART_STRIDES, p + ATTNC_P_O_PART_STRIDES + 4, seen.oStrides);
  std::copy(p + ATTNC_P_LSE_PART_STRIDES, p + ATTNC_P_LSE_PART_STRIDES + 3, seen.lseStrides);
  auto *lse = static_cast<float *>(t[6].aligned);
  int64_t seqQ = p[ATTNC_P_SEQ_Q], group = 2, splits = 3;
  if (seen.calls++ < seen.firstPhaseItems) {
    auto [b, g, split] = std::tuple(index[0], index[1], index[2]);
    for (int64_t h = g * group; h < (g + 1) * group; ++h)
      for (int64_t s = 0; s < seqQ; ++s)
        lse[b * p[ATTNC_P_LSE_PART_STRIDES] + h * p[ATTNC_P_LSE_PART_STRIDES + 1] +
            split * p[ATTNC_P_LSE_PART_STRIDES + 2] + s] = float(b * 100 + g * 10 + split);
    return 0;
  }
  ++seen.merges;
  auto [b, h] = std::pair(index[0], index[1]);
  for (int64_t split = 0; split < splits; ++split)
    for (int64_t s = 0; s < seqQ; ++s)
      seen.mismatches += lse[b * p[ATTNC_P_LSE_PART_STRIDES] + h * p[ATTNC_P_LSE_PART_STRIDES + 1] +
                             split * p[ATTNC_P_LSE_PART_STRIDES + 2] + s] !=
                         float(b * 100 + (h / group) * 10 + split);
  return 0;
}

// A decode interface (facts.splits): the runtime allocates o_part and
// lse_part, compact and 64-byte aligned, hands them to every item after the
// five arguments with their strides in params, keeps them across phases, and
// the call takes attention's five tensors.
TEST_F(Runtime, ScratchTensorsLiveAcrossPhases) {
  Problem p;
  p.facts.splits = 3;
  p.item = scratchItem;
  ScratchSeen seen;
  seen.firstPhaseItems = p.n.batch * p.n.kvHeads * 3;
  gScratch = &seen;
  ASSERT_EQ(p.run(2), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(seen.calls, seen.firstPhaseItems + p.n.batch * p.n.heads);
  EXPECT_EQ(seen.merges, p.n.batch * p.n.heads);
  EXPECT_EQ(seen.mismatches, 0);
  const Dims &n = p.n;
  EXPECT_EQ(seen.oPart.size, n.batch * n.heads * 3 * n.seqQ * n.dim);
  EXPECT_EQ(seen.lsePart.size, n.batch * n.heads * 3 * n.seqQ);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(seen.oPart.aligned) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(seen.lsePart.aligned) % 64, 0u);
  int64_t oStrides[4] = {n.heads * 3 * n.seqQ * n.dim, 3 * n.seqQ * n.dim, n.seqQ * n.dim, n.dim};
  int64_t lseStrides[3] = {n.heads * 3 * n.seqQ, 3 * n.seqQ, n.seqQ};
  EXPECT_TRUE(std::equal(oStrides, oStrides + 4, seen.oStrides));
  EXPECT_TRUE(std::equal(lseStrides, lseStrides + 3, seen.lseStrides));
  gScratch = nullptr;
}

// A scratch tensor at an argument's position (or flagged an output) is a
// malformed descriptor, refused before anything runs.
TEST_F(Runtime, ScratchAmongTheArgumentsIsMalformed) {
  Problem p;
  p.facts.splits = 3;
  attnc::KernelInterface in = attnc::attentionInterface(p.facts);
  in.tensors[5].arg = 2;
  attnc::InterfaceTables tables(std::move(in));
  tables.fill(p.desc, p.item, nullptr);
  EXPECT_EQ(attnc_rt_launch(&p.desc, &p.q.dl, &p.k.dl, &p.v.dl, &p.out.dl, &p.lse.dl, nullptr),
            ATTNC_ERR_ABI);
  EXPECT_STREQ(attnc_last_error(), "kernel 'fake': malformed descriptor: scratch tensor o_part "
               "is view 2, not a free one in [5, 32) after the arguments, or is flagged an "
               "output, or belongs to a kernel neither on kDLCPU nor on kDLCUDA");
  EXPECT_TRUE(gVisits.empty());
}

// PyTorch's empty tensors may have no storage: NULL data is refused only on a
// tensor with elements (RuntimeErrorsTest's NullData).
TEST_F(Runtime, EmptyTensorsMayHaveNullData) {
  Problem keyless(0, Dims{2, 4, 2, 5, 0, 4, 2});
  keyless.k.dl.data = keyless.v.dl.data = nullptr;
  ASSERT_EQ(keyless.run(), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(keyless.out.at(keyless.at(1, 3, 4, 3)), 0.0f);
  Problem empty(0, Dims{0, 4, 2, 5, 3, 4, 2});
  for (Tensor *t : {&empty.q, &empty.k, &empty.v, &empty.out, &empty.lse})
    t->dl.data = nullptr;
  ASSERT_EQ(empty.run(), ATTNC_OK) << attnc_last_error();
  EXPECT_TRUE(gVisits.empty());
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
  // The problems outlive every caller: the fake tile reads the last-set gFacts.
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

/// A kernel of one work item per head, each launching a whole kernel of
/// its own: inner[h].
Problem nestingProblem(std::vector<Problem> &inner) {
  gInner = &inner;
  Dims dims;
  dims.batch = 1;
  dims.heads = dims.kvHeads = int64_t(inner.size());
  Problem outer(0, dims);
  outer.item = itemOf<nestingTile>;
  outer.facts.blockQ = dims.seqQ;
  return outer;
}

TEST_F(Runtime, KernelMayLaunchAKernel) {
  std::vector<Problem> inner(4);
  Problem outer = nestingProblem(inner);
  // Nested launches run on the calling thread instead of deadlocking.
  ASSERT_EQ(outer.run(2), ATTNC_OK) << attnc_last_error();
  for (Problem &p : inner)
    p.expectOutputs();
}

std::atomic<bool> gFirstStarted{false}, gSecondStarted{false};

/// Holds a launch until a tile of the other launch has started (`mine` is
/// this launch's flag); fails after 30 s.
int32_t meet(std::atomic<bool> &mine, const std::atomic<bool> &other) {
  mine = true;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!other)
    if (std::chrono::steady_clock::now() > deadline)
      return 7;
    else
      std::this_thread::yield();
  return 0;
}

int32_t firstTile(attnc_memref *, attnc_memref *, attnc_memref *, attnc_memref *,
                  attnc_memref *, attnc_memref_i64 *, int64_t, int64_t, int64_t) {
  return meet(gFirstStarted, gSecondStarted);
}

int32_t secondTile(attnc_memref *, attnc_memref *, attnc_memref *, attnc_memref *,
                   attnc_memref *, attnc_memref_i64 *, int64_t, int64_t, int64_t) {
  return meet(gSecondStarted, gFirstStarted);
}

/// The second launch's num_threads.
class AtOnce : public Runtime, public ::testing::WithParamInterface<int> {};

TEST_P(AtOnce, LaunchesFromTwoThreadsRunAtOnce) {
  // Neither launch can finish before a tile of the other has started, so
  // this passes only if a launch on the pool (num_threads 2) does not wait
  // for another launch on it, nor for a single-thread one.
  gFirstStarted = gSecondStarted = false;
  Problem first, second;
  first.item = itemOf<firstTile>;
  second.item = itemOf<secondTile>;
  std::thread other([&] { EXPECT_EQ(first.run(2), ATTNC_OK) << attnc_last_error(); });
  EXPECT_EQ(second.run(GetParam()), ATTNC_OK) << attnc_last_error();
  other.join();
}

INSTANTIATE_TEST_SUITE_P(Runtime, AtOnce, ::testing::Values(1, 2, 0),
                         [](const auto &c) {
                           return c.param ? std::to_string(c.param) : "AllCores";
                         });

/// A host's parallel-for (attnc_set_parallel_for) on std::threads: call 0 on
/// the caller, the others on threads of their own; or it runs only the first
/// `limit` calls, or fails with `rc`.
struct HostLoop {
  std::atomic<int> calls{0};
  int32_t lastCount = 0;
  int32_t limit = INT32_MAX;
  int rc = 0;
};

int hostLoop(void *user, int32_t count, void (*body)(void *, int32_t), void *closure) {
  auto &host = *static_cast<HostLoop *>(user);
  ++host.calls;
  host.lastCount = count;
  if (host.rc)
    return host.rc;
  int32_t run = std::min(count, host.limit);
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < run; ++i)
    threads.emplace_back(body, closure, i);
  if (run > 0)
    body(closure, 0);
  for (std::thread &t : threads)
    t.join();
  return 0;
}

/// Sets `host` as the parallel-for for a test's lifetime.
class HostParallelFor : public Runtime {
protected:
  HostLoop host;
  void SetUp() override {
    Runtime::SetUp();
    attnc_set_parallel_for(hostLoop, &host);
  }
  void TearDown() override { attnc_set_parallel_for(nullptr, nullptr); }
};

TEST_F(HostParallelFor, RunsTheLaunchOnTheHostsThreads) {
  Problem p;
  ASSERT_EQ(p.run(3), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(host.calls, 1);
  EXPECT_EQ(host.lastCount, 3);
  p.expectOutputs();
  p.expectEachItemOnce();
  EXPECT_LE(gThreads.size(), 3u);
}

TEST_F(HostParallelFor, NotForSingleThreadLaunches) {
  Problem p;
  ASSERT_EQ(p.run(1), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(host.calls, 0);
  p.expectOutputs();
}

TEST_F(HostParallelFor, WorkNoCallTookRunsOnTheCaller) {
  // A loop that runs fewer calls than asked (here none) is slower, not wrong.
  host.limit = 0;
  Problem p;
  ASSERT_EQ(p.run(4), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(host.calls, 1);
  p.expectOutputs();
  p.expectEachItemOnce();
  ASSERT_EQ(gThreads.size(), 1u);
  EXPECT_EQ(*gThreads.begin(), std::this_thread::get_id());
}

TEST_F(HostParallelFor, ItsFailureIsAKernelError) {
  host.rc = 5;
  Problem p;
  EXPECT_EQ(p.run(2), ATTNC_ERR_KERNEL);
  EXPECT_NE(std::string(attnc_last_error()).find("attnc_set_parallel_for returned 5"),
            std::string::npos)
      << attnc_last_error();
}

TEST_F(HostParallelFor, NullGoesBackToThePool) {
  attnc_set_parallel_for(nullptr, &host);
  Problem p;
  ASSERT_EQ(p.run(2), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(host.calls, 0);
  p.expectOutputs();
}

TEST_F(HostParallelFor, KernelMayLaunchAKernelFromAHostThread) {
  std::vector<Problem> inner(4);
  Problem outer = nestingProblem(inner);
  // The nested launches run on their host thread alone: one loop call each.
  ASSERT_EQ(outer.run(2), ATTNC_OK) << attnc_last_error();
  EXPECT_EQ(host.calls, 1);
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

// Tensors a kernel's mods read follow the outputs; their dims may scale a
// symbol and take a constant ("2*seq_kv-1"), which only an earlier tensor
// binds, and an int32 one with bound "any" is data the runtime leaves alone.
TEST_F(Runtime, ModInputsTakeDerivedDims) {
  Problem p;
  p.facts.inputs = {{"bias", "heads,2*seq_kv-1", kDLFloat, 32},
                    {"document_id", "batch,seq_kv", kDLInt, 32}};
  p.describe();
  gFacts = &p.facts; // what the fake tile function reads
  const Dims &n = p.n;
  Tensor bias({n.heads, 2 * n.seqKV - 1});
  Tensor ids({n.batch, n.seqKV}, {}, 0, DLDataType{kDLInt, 32, 1});
  const DLTensor *args[7] = {&p.q.dl, &p.k.dl, &p.v.dl, &p.out.dl, &p.lse.dl, &bias.dl,
                             &ids.dl};
  EXPECT_EQ(attnc_rt_run(&p.desc, args, nullptr), ATTNC_OK) << attnc_last_error();
  Tensor shorter({n.heads, 2 * n.seqKV});
  args[5] = &shorter.dl;
  EXPECT_EQ(attnc_rt_run(&p.desc, args, nullptr), ATTNC_ERR_SHAPE);
  EXPECT_EQ(std::string(attnc_last_error()),
            "kernel 'fake': bias has shape [" + std::to_string(n.heads) + ", " +
                std::to_string(2 * n.seqKV) + "] but needs [" + std::to_string(n.heads) + ", " +
                std::to_string(2 * n.seqKV - 1) + "] (heads, 2*seq_kv-1)");
  // A dim of no symbol of the kernel: a malformed descriptor.
  p.facts.inputs = {{"bias", "heads,2*max_pages", kDLFloat, 32}};
  p.describe();
  EXPECT_EQ(attnc_rt_run(&p.desc, args, nullptr), ATTNC_ERR_ABI);
  EXPECT_NE(std::string(attnc_last_error()).find("names 2*max_pages, which is not a symbol"),
            std::string::npos)
      << attnc_last_error();
}

// An optional input (ATTNC_TENSOR_OPTIONAL, a backward kernel's d_lse) may be
// NULL: the launch runs, and its view is empty; given, it is checked as any
// input. Optional on an output is a malformed descriptor.
TEST_F(Runtime, OptionalInputMayBeNull) {
  Problem p;
  p.facts.inputs = {{"bias", "heads,2*seq_kv-1", kDLFloat, 32}};
  attnc::KernelInterface in = attnc::attentionInterface(p.facts);
  for (attnc::TensorSpec &t : in.tensors)
    if (t.name == "bias")
      t.flags |= ATTNC_TENSOR_OPTIONAL;
  attnc::InterfaceTables tables(std::move(in));
  tables.fill(p.desc, p.item, nullptr);
  gFacts = &p.facts;
  const Dims &n = p.n;
  const DLTensor *args[6] = {&p.q.dl, &p.k.dl, &p.v.dl, &p.out.dl, &p.lse.dl, nullptr};
  EXPECT_EQ(attnc_rt_run(&p.desc, args, nullptr), ATTNC_OK) << attnc_last_error();
  Tensor shorter({n.heads, 2 * n.seqKV});
  args[5] = &shorter.dl;
  EXPECT_EQ(attnc_rt_run(&p.desc, args, nullptr), ATTNC_ERR_SHAPE);

  attnc::KernelInterface outputs = attnc::attentionInterface(p.facts);
  outputs.tensors[3].flags |= ATTNC_TENSOR_OPTIONAL; // out
  attnc::InterfaceTables malformed(std::move(outputs));
  malformed.fill(p.desc, p.item, nullptr);
  args[5] = nullptr;
  EXPECT_EQ(attnc_rt_run(&p.desc, args, nullptr), ATTNC_ERR_ABI);
  EXPECT_STREQ(attnc_last_error(), "kernel 'fake': malformed descriptor: tensor out has flags 11: "
                                   "unknown bits, or optional on an output or scratch tensor");
}
