//===- RuntimeErrorsTest.cpp - Unit tests for the runtime's refusals ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every bad argument the runtime refuses, with its status and message, before
// any element is touched; and kernels that fail once running.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

using namespace attnc::runtime_test;

namespace {

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
     "kernel 'fake': v has NULL data; a tensor with elements must point at them"},
    {"LseMissing", [](Problem &p) { p.drop[4] = true; }, ATTNC_ERR_NULL,
     "kernel 'fake': lse is NULL, but this kernel outputs lse and needs a float32 CPU "
     "tensor for it (batch, heads, seq_q)"},
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
    // A feature bit no CPU has (bit 40 is none of attnc_cpu_feature's).
    {"CpuNeeds", [](Problem &p) { p.desc.cpu_needs = int64_t(1) << 40; p.desc.target = "t"; },
     ATTNC_ERR_CPU, "kernel 'fake' was built for t, whose code needs "},
    {"MaxSeqQ", [](Problem &p) { p.facts.maxSeqQ = 4; }, ATTNC_ERR_LIMIT,
     "q has seq_q = 5 but the kernel was compiled for at most max_seq_q = 4"},
    {"MaxSeqKV", [](Problem &p) { p.facts.maxSeqKv = 2; }, ATTNC_ERR_LIMIT,
     "k has seq_kv = 3 but the kernel was compiled for at most max_seq_kv = 2"},
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
     "version 10 but this runtime implements version 9"},
    {"AbiVersion2", [](Problem &p) { p.desc.abi_version = 2; }, ATTNC_ERR_ABI,
     "the kernel was built for runtime ABI version 2 but this runtime "
     "implements version 9; rebuild the kernel with a matching attnc"},
    // Of several mistakes, the most basic category is reported.
    {"FirstCategoryWins", [](Problem &p) { p.q.dl.device = {kDLCUDA, 0};
                                           p.q.dl.byte_offset = 2; },
     ATTNC_ERR_DEVICE, "q is on device kDLCUDA"},
    {"NullDesc", [](Problem &p) { p.dropDesc = true; }, ATTNC_ERR_ABI,
     "attnc_rt_launch: the kernel descriptor is NULL"},
    {"MalformedDesc", [](Problem &p) { p.facts.blockQ = 0; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: block_q = 0 must be fixed and >= 1: it divides "
     "seq_q into the work items of phase 'attention'"},
    {"CudaDesc", [](Problem &p) { p.desc.device_type = kDLCUDA; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: device_type = kDLCUDA (2), but this "
     "runtime only launches kDLCPU (1) kernels, and device phases on kDLCUDA (2)"},
    {"TileAndGrid", [](Problem &p) { p.device = deviceOf<fakeGrid>; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: phase 'attention' must have one of an item "
     "function and a device function"},
    {"NeitherTileNorGrid", [](Problem &p) { p.item = nullptr; }, ATTNC_ERR_ABI,
     "malformed descriptor: phase 'attention' must have one of an item function and a "
     "device function"},
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
     ATTNC_ERR_STRIDE, "kernel 'fake': q's data + byte_offset 18446744073709551612 lies "
     "past the end of a process's address space"},
    // 2^63 added to a valid pointer does not wrap, but lands in the operating system's half.
    {"ByteOffsetUpperHalf", [](Problem &p) { p.q.dl.byte_offset = uint64_t(1) << 63; },
     ATTNC_ERR_STRIDE, "kernel 'fake': q's data + byte_offset 9223372036854775808 lies "
     "past the end of a process's address space"},
    {"HugeSeqOfZeroStrides", [](Problem &p) {
       for (Tensor *x : {&p.q, &p.out}) {
         x->shape[2] = int64_t(1) << 62;
         x->strides = {0, 0, 0, 1};
         x->dl.strides = x->strides.data();
       }
       p.lse.shape[2] = int64_t(1) << 62; },
     ATTNC_ERR_LIMIT, "kernel 'fake': q has seq_q = 4611686018427387904, which must be at "
     "most 2^32 (4294967296)"},
    // A kernel runs on one device.
    {"CudaDevicesDiffer", [](Problem &p) { p.makeCudaGrid(); p.v.dl.device.device_id = 1; },
     ATTNC_ERR_DEVICE, "kernel 'fake': v is on kDLCUDA device 1 but q on device 0; "
     "a kernel runs on one device, with every tensor there"},
    {"Float64Desc", [](Problem &p) { p.facts.dtypeBits = 64; }, ATTNC_ERR_ABI,
     "kernel 'fake': malformed descriptor: tensor q has dtype_code = 2 and dtype_bits = 64, "
     "but this runtime only runs float32 (kDLFloat = 2, 32 bits), float16 "
     "(kDLFloat = 2, 16 bits) and bfloat16 (kDLBfloat = 4, 16 bits) tensors"},
    // Code and bits are checked as a pair.
    {"Bfloat32Desc", [](Problem &p) { p.facts.dtypeCode = kDLBfloat; },
     ATTNC_ERR_ABI, "malformed descriptor: tensor q has dtype_code = 4 and dtype_bits = 32, "
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
     "kernel 'fake': lse is NULL, but this kernel outputs lse and needs a float32 CPU "
     "tensor for it (batch, heads, seq_q)", 0, kBF16},
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
               "(b=1, h=2, q_tile=1: seq_q 2..3) of phase 'attention': a score_mod or "
               "mask_mod failed, e.g. an integer division by zero; its outputs are partly "
               "written");
  // One thread claims items in order and stops at the failing one (the
  // claims there are single items).
  EXPECT_EQ(int64_t(gVisits.size()), (1 * 4 + 2) * 3 + 1 + 1);
  EXPECT_EQ(p.run(0), ATTNC_ERR_KERNEL);
}

// The lower of two failed items is reported though it fails last (other
// threads fail the higher one meanwhile).
TEST_F(Runtime, ErrorNamesTheLowestFailedItemForAnyThreads) {
  Problem p;
  gFailAt = {1, 2, 1};
  gFailAlso = {0, 3, 2};
  for (int threads : {1, 2, 3, 8}) {
    EXPECT_EQ(p.run(threads), ATTNC_ERR_KERNEL);
    EXPECT_NE(std::string(attnc_last_error()).find("on work item (b=0, h=3, q_tile=2"),
              std::string::npos)
        << threads << " threads: " << attnc_last_error();
  }
}

TEST_F(Runtime, GridKernelFailure) {
  Problem p;
  p.makeCudaGrid();
  gGridCode = -1;
  EXPECT_EQ(p.run(), ATTNC_ERR_KERNEL);
  gGridCode = 0;
  EXPECT_STREQ(attnc_last_error(),
               "kernel 'fake' failed with code -1 in phase 'attention': the kernel's Halide "
               "pipeline returned this Halide error code, e.g. a score_mod or mask_mod dividing "
               "by zero, or a failed device call (its message went to stderr); its outputs may "
               "be partly written");
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

} // namespace
