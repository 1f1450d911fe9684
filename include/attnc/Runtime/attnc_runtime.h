/*===- attnc_runtime.h - the C runtime under attnc's CPU kernels ----------===*
 *
 * Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *===----------------------------------------------------------------------===*
 *
 * Plain C, no MLIR/LLVM/Halide. A kernel object compiled by attnc holds one
 * constant attnc_kernel_desc (with its symbol, tensor and phase tables) and
 * one exported entry point,
 *
 *   int NAME(const DLTensor *q, const DLTensor *k, const DLTensor *v,
 *            DLTensor *out, DLTensor *lse, const attnc_options *opt);
 *
 * which forwards to attnc_rt_launch(&NAME_desc, ...). The runtime checks every
 * argument against the descriptor's tables, then runs the kernel's phases on
 * a thread pool: for attention one, whose work items are (batch, head, query
 * tile); for a split-KV decode two, (batch, KV head, split) and a merge over
 * (batch, head), on scratch tensors the runtime allocates.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ATTNC_RUNTIME_ATTNC_RUNTIME_H
#define ATTNC_RUNTIME_ATTNC_RUNTIME_H

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever attnc_kernel_desc or the tile function signature changes.
 * 2: the descriptor gained device_type and dtype_code. float16 and bfloat16
 * kernels need no new version: their tile functions take the same memref
 * descriptors (attnc_memref), and a runtime that predates them refuses their
 * dtype_code / dtype_bits with ATTNC_ERR_ABI instead of misreading data.
 * 3: the descriptor gained `grid` (whole-tensor kernels: the Halide GPU
 * targets), attnc_options `stream`.
 * 4: the descriptor gained `cpu_needs` and `target` (the CPU features its
 * code needs, checked at launch, and the attnc target it was built for).
 * 5: kernel interface v2: the descriptor lists the kernel's symbols,
 * tensors and phases, and item / device functions take every tensor in one
 * array; the attention facts (heads, layout, block_q, ...) left it for its
 * tables.
 * 6: a tensor's table entry gained `bound` (int32 lengths and indices, such
 * as a paged KV cache's block table, checked before the launch).
 * 7: dims may add a constant to a symbol ("batch+1"), and a bound may end in
 * ";steps<=S" (offsets such as cu_seqlens, whose largest step binds S).
 * 8: a bound may end in ";each<=steps(T)" (entry b at most T[b + 1] - T[b]:
 * the keys each packed sequence uses, kv_lens with varlen).
 * 9: dims may scale a symbol and add or take a constant ("2*seq_kv-1",
 * tensors a mod reads); an item function's return of
 * ATTNC_ITEM_INDEX_FAILURE + arg reports an index outside tensor arg. */
#define ATTNC_ABI_VERSION 9

typedef struct attnc_options {
  /* Threads working on the launch, the calling thread included; 0 (or less)
   * = all cores (std::thread::hardware_concurrency()). Capped at 256, and
   * never more than work items. The helper threads come from a process-wide
   * pool that is created on first use and kept, or from the host's
   * parallel-for (attnc_set_parallel_for). */
  int32_t num_threads;
  /* Kernels on kDLCUDA tensors: the CUstream to run on; NULL = the default
   * stream of the tensors' device's primary context. The call returns once
   * the work is queued (it does not wait for it). */
  void *stream;
} attnc_options;

typedef enum attnc_status {
  ATTNC_OK = 0,
  ATTNC_ERR_NULL = 1,     /* a required tensor or its data is NULL */
  ATTNC_ERR_DTYPE = 2,    /* wrong element type */
  ATTNC_ERR_DEVICE = 3,   /* a tensor not on the kernel's device */
  ATTNC_ERR_SHAPE = 4,    /* wrong rank, or a shape that does not fit the spec or the others */
  ATTNC_ERR_STRIDE = 5,   /* head_dim not contiguous, or negative strides */
  ATTNC_ERR_LIMIT = 6,    /* lengths beyond the spec's max_seq or block layout */
  ATTNC_ERR_ABI = 7,      /* kernel built for another runtime ABI version */
  ATTNC_ERR_KERNEL = 8,   /* the kernel itself failed (e.g. a mod divided by zero) */
  ATTNC_ERR_ALIAS = 9,    /* out or lse overlaps another tensor, or maps two elements
                             to one address */
  ATTNC_ERR_CPU = 10,     /* this CPU lacks features the kernel's code needs, or
                             ATTNC_TARGET names no variant of the kernel */
  ATTNC_ERR_INDEX = 11    /* an entry of a lengths, index or offsets tensor
                             (kv_lens, block_table, cu_seqlens) outside its
                             range, or offsets that decrease (nothing was read);
                             or a mod's load outside an input (nothing outside
                             it was read; the outputs are partly written) */
} attnc_status;

/* The message of the last failed call on this thread; "" if none. */
const char *attnc_last_error(void);

/* The attnc target of the code the last launch on this thread ran (a
 * multi-target object's chosen variant), or "" before any launch. */
const char *attnc_last_target(void);

/* CPU features a kernel's code may need (attnc_kernel_desc cpu_needs). */
enum attnc_cpu_feature {
  ATTNC_CPU_AVX2 = 1 << 0,
  ATTNC_CPU_FMA = 1 << 1,
  ATTNC_CPU_BMI2 = 1 << 2,
  ATTNC_CPU_F16C = 1 << 3,
  ATTNC_CPU_AVX512F = 1 << 4,
  ATTNC_CPU_AVX512BW = 1 << 5,
  ATTNC_CPU_AVX512CD = 1 << 6,
  ATTNC_CPU_AVX512DQ = 1 << 7,
  ATTNC_CPU_AVX512VL = 1 << 8,
  ATTNC_CPU_AVX512BF16 = 1 << 9,
  ATTNC_CPU_SVE256 = 1 << 10, /* AArch64 SVE with vectors of at least 256 bits */
  ATTNC_CPU_SVE512 = 1 << 11  /* ... of at least 512 bits */
};

/* This CPU's attnc_cpu_feature bits: on x86-64 cpuid, and for AVX / AVX-512
 * the register state the OS saves (xgetbv); on AArch64 the SVE hwcap and the
 * thread's vector length. The environment variable
 * ATTNC_CPU_FEATURES, read once, replaces what the CPU says with its list
 * (comma-separated lower-case names: "avx2,fma,bmi2,f16c"; "none" for none),
 * so that the dispatch and the launch checks can be tested as if on another
 * CPU; it can only take features away from the code's point of view, never
 * make unsupported instructions run. A name attnc does not know makes every
 * launch fail with ATTNC_ERR_CPU, naming it. */
uint64_t attnc_cpu_features(void);

/* A 1-d MLIR memref descriptor (MLIR's C interface for memref<?xT>). Its
 * layout is the same for every element type T, so one struct with untyped
 * pointers serves q, k, v and out (T = the kernel's dtype: float32, float16
 * or bfloat16) and lse (always float32). offset, size and stride count
 * elements of T, not bytes. */
typedef struct attnc_memref {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} attnc_memref;

typedef struct attnc_memref_i64 {
  int64_t *allocated;
  int64_t *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
} attnc_memref_i64;

/* Indices into the params array handed to a tile function. Strides are in
 * elements; the head_dim stride is always 1. lse strides address
 * [batch, heads, seq_q]. */
enum attnc_param {
  ATTNC_P_SEQ_Q = 0,
  ATTNC_P_SEQ_KV = 1,
  ATTNC_P_Q_STRIDES = 2,   /* batch, head, seq */
  ATTNC_P_K_STRIDES = 5,
  ATTNC_P_V_STRIDES = 8,
  ATTNC_P_OUT_STRIDES = 11,
  ATTNC_P_LSE_STRIDES = 14,
  ATTNC_P_COUNT = 17,
  /* Kernels that output the attention weights: their strides (batch, head,
   * seq_q; seq_kv's is 1), after the 17 every kernel has. */
  ATTNC_P_WEIGHTS_STRIDES = 17,
  /* Split-KV decode kernels (no weights): their scratch tensors' strides,
   * o_part's (batch, head, split, seq_q) and lse_part's (batch, head, split). */
  ATTNC_P_O_PART_STRIDES = 17,
  ATTNC_P_LSE_PART_STRIDES = 21,
  ATTNC_P_DECODE_COUNT = 24,
  /* Decode kernels with kv_cache: kv_lens' stride (batch), and with pages
   * block_table's (batch; max_pages' is 1). */
  ATTNC_P_KV_LENS_STRIDES = 24,
  ATTNC_P_BLOCK_TABLE_STRIDES = 25,
  ATTNC_P_SERVING_COUNT = 26,
  /* Packed variable-length kernels (varlen = cu_seqlens; no weights, not
   * decode): cu_seqlens_q's and cu_seqlens_kv's strides. Their q, k, v and
   * out have no batch stride (params[ATTNC_P_Q_STRIDES] etc. stay 0), lse's
   * are (head, seq_q) at ATTNC_P_LSE_STRIDES + 1, and seq_q and seq_kv are
   * the longest sequence's lengths. */
  ATTNC_P_CU_SEQLENS_Q_STRIDES = 17,
  ATTNC_P_CU_SEQLENS_KV_STRIDES = 18,
  ATTNC_P_VARLEN_COUNT = 19,
  /* ... with kv_cache = lengths: kv_lens' stride (the keys each sequence
   * uses, FlashAttention's seqused_k). */
  ATTNC_P_VARLEN_KV_LENS_STRIDES = 19,
  ATTNC_P_VARLEN_LENGTHS_COUNT = 20,
  /* Backward kernels (outputs = [dq, dk, dv]; out and lse are inputs):
   * d_out's, dq's, dk's and dv's strides (batch, head, seq), then the
   * scratch dq_part's (batch, head, chunk, seq_q) and delta's (batch, head),
   * then the optional d_lse's (batch, head, seq_q; 0 when it is NULL). */
  ATTNC_P_DOUT_STRIDES = 17,
  ATTNC_P_DQ_STRIDES = 20,
  ATTNC_P_DK_STRIDES = 23,
  ATTNC_P_DV_STRIDES = 26,
  ATTNC_P_DQ_PART_STRIDES = 29,
  ATTNC_P_DELTA_STRIDES = 33,
  ATTNC_P_DLSE_STRIDES = 35,
  ATTNC_P_BACKWARD_COUNT = 38,
  /* Linear attention kernels (attn.linear_attention) take the lengths and
   * q, k, v and out's strides above (a causal one's seq_q and seq_kv are
   * both its one length), then the strides (batch, kv head, head_dim row) of
   * its states [batch, kv_heads, head_dim, value_dim] and (batch, kv head)
   * of its normalizers [batch, kv_heads, head_dim]: the initial ones (state =
   * carry; 0 when NULL), the final ones, and the scratch ones in which a
   * kernel without state = carry builds them. */
  ATTNC_P_INITIAL_STATE_STRIDES = 14,
  ATTNC_P_INITIAL_NORM_STRIDES = 17,
  ATTNC_P_FINAL_STATE_STRIDES = 19,
  ATTNC_P_FINAL_NORM_STRIDES = 22,
  ATTNC_P_KV_STATE_STRIDES = 24,
  ATTNC_P_KV_NORM_STRIDES = 27,
  ATTNC_P_LINEAR_COUNT = 29,
  /* Multi-head attention kernels (attn.multihead_attention) take the
   * attention's params above for their f32 scratch q, k, v and attention
   * output (token-major), then x's strides (batch, seq), the row strides of
   * in_proj_weight and out_proj_weight and the biases' strides (0 when
   * NULL), out's (batch, seq), and with key_padding = lengths key_lengths'
   * (batch). */
  ATTNC_P_X_STRIDES = 17,
  ATTNC_P_IN_WEIGHT_STRIDES = 19,
  ATTNC_P_IN_BIAS_STRIDES = 20,
  ATTNC_P_OUT_WEIGHT_STRIDES = 21,
  ATTNC_P_OUT_BIAS_STRIDES = 22,
  ATTNC_P_EMBED_OUT_STRIDES = 23,
  ATTNC_P_KEY_LENGTHS_STRIDES = 25,
  ATTNC_P_MULTIHEAD_COUNT = 26,
  /* Projection kernels (attn.projection): seq, x's strides (batch, seq), the
   * weight's row stride, the bias' stride (0 when NULL), y's (batch, seq). */
  ATTNC_P_PROJ_SEQ = 0,
  ATTNC_P_PROJ_X_STRIDES = 1,
  ATTNC_P_PROJ_WEIGHT_STRIDES = 3,
  ATTNC_P_PROJ_BIAS_STRIDES = 4,
  ATTNC_P_PROJ_Y_STRIDES = 5,
  ATTNC_P_PROJECTION_COUNT = 7
};

/* The attention family's functions, which its tables' item and device
 * functions forward to (attn-emit-cpu-entry writes those adapters).
 *
 * Computes query tile `q_tile` of head `h` of batch `b`: rows
 * [q_tile * block_q, min(seq_q, (q_tile + 1) * block_q)). q, k, v, out and lse
 * are flat views of the whole tensors (lse has size 0 when not requested):
 * q, k, v and out are memref<?xT> with T the descriptor's dtype, lse is
 * memref<?xf32>. Returns 0, or non-zero when a score_mod / mask_mod failed. */
typedef int32_t (*attnc_tile_fn)(attnc_memref *q, attnc_memref *k,
                                 attnc_memref *v, attnc_memref *out,
                                 attnc_memref *lse, attnc_memref_i64 *params,
                                 int64_t b, int64_t h, int64_t q_tile);

/* Computes every work item at once (a GPU kernel; its blocks are the work
 * items), on the same views and params as a tile function. device_id is the
 * tensors' DLDevice id, stream attnc_options' (or NULL). Returns 0, or a
 * non-zero code (lib/Runtime/HalideGrid.cpp). */
typedef int32_t (*attnc_grid_fn)(attnc_memref *q, attnc_memref *k,
                                 attnc_memref *v, attnc_memref *out,
                                 attnc_memref *lse, attnc_memref_i64 *params,
                                 int64_t batch, int64_t device_id, void *stream);

/* Kernel interface v2: a kernel describes its own interface in three tables
 * (its sizes, its tensors, its phases of work), and the runtime checks and
 * schedules every launch from those tables alone, knowing nothing of
 * attention. A new kernel family (a split-KV decode, a paged cache, linear
 * attention) is new tables, not new runtime code.
 *
 * A symbol is one size of the interface, named as the tables and the
 * messages spell it: fixed by the kernel ("heads" = 8, "head_dim" = 64) or
 * bound by the launch's tensors ("batch", "seq_q": the first tensor, in
 * table order, with a dimension of that name sets it; every later one must
 * match). */
typedef struct attnc_symbol_desc {
  const char *name;
  int64_t value; /* >= 0: fixed by the kernel; < 0: bound by the tensors */
  int64_t max;   /* a bound symbol's largest value; <= 0: no bound but 2^32 */
  int32_t param; /* index in params where the value is passed; < 0: not passed */
  int32_t flags; /* attnc_symbol_flag bits */
} attnc_symbol_desc;

enum attnc_symbol_flag {
  /* A size the kernel reduces over (seq_kv: softmax sums over keys). When it
   * is 0 no phase runs: a CPU kernel's outputs get their fill values (out =
   * 0, lse = -inf: the reference's rule for rows with nothing to attend to),
   * and a launch on another device fails with ATTNC_ERR_SHAPE. */
  ATTNC_SYMBOL_REDUCED = 1
};

/* One tensor of the interface. Its rank is the number of its dims. */
typedef struct attnc_tensor_desc {
  const char *name;     /* "q" */
  const char *dims;     /* symbol names, outermost first: "batch,heads,seq_q,head_dim";
                           a name may add 1 to 64 ("batch+1": extent batch + 1), and
                           where an earlier tensor binds it, be scaled by 1 to 64 and
                           lowered by 1 to 64 ("2*seq_kv-1"; an extent below 0 is 0) */
  const char *legend;   /* the dims as messages explain them ("bhsd: batch, heads, ...") */
  const char *about;    /* a clause that dtype messages add, or NULL */
  const char *strides;  /* the dims whose element strides are passed in params, in
                           this order from stride_param on: "batch,heads,seq_q" */
  int32_t arg;          /* position among the launch's tensor arguments */
  int32_t flags;        /* attnc_tensor_flag bits */
  int32_t dtype_code;   /* element type as a DLDataType: code (kDLFloat, kDLBfloat) */
  int32_t dtype_bits;   /* ... and bits, with 1 lane */
  int32_t stride_param; /* index in params of the first of `strides` */
  int32_t fill;         /* an output's attnc_fill, for a REDUCED symbol of 0 */
  /* NULL, or the range of an int32 tensor's entries, checked entry by entry
   * before any phase runs (ATTNC_ERR_INDEX): "<S" for [0, S), "<=S" for
   * [0, S], S a symbol or a product of symbols ("max_pages*page_size").
   * A 1-d tensor of offsets adds ";steps<=T": its entries do not decrease
   * and no two neighbours differ by more than T; a symbol T no dim binds
   * takes the largest difference ("<=total_q;steps<=seq_q": cu_seqlens_q,
   * whose largest step is the longest sequence). "any": entries are data,
   * not indices or lengths (an int32 tensor a mod reads, whose kernel checks
   * each index it loads at), left unchecked. */
  const char *bound;
} attnc_tensor_desc;

enum attnc_tensor_flag {
  ATTNC_TENSOR_OUTPUT = 1,     /* written: checked against aliasing */
  ATTNC_TENSOR_UNIT_INNER = 2, /* its innermost dim has stride 1 (unless of extent 1) */
  /* Not an argument: working memory the runtime allocates for each launch of a
   * kDLCPU kernel (compact row-major, 64-byte aligned, uninitialized) once
   * its dims' symbols are known, hands to the item functions at position
   * `arg` (num_args or beyond: after the arguments) and frees after the last
   * phase; for a kDLCUDA kernel, memory of the tensors' device allocated and
   * freed on the launch's stream (cuMemAllocAsync, cuMemFreeAsync), handed
   * to its device functions. A split-KV decode's partial results between its
   * two phases. */
  ATTNC_TENSOR_SCRATCH = 4,
  /* An input the caller may pass as NULL: the kernel then reads none of it
   * (its view has NULL data and zero extents and strides). Its dims are
   * bound by the other tensors. A backward kernel's d_lse. */
  ATTNC_TENSOR_OPTIONAL = 8
};

enum attnc_fill { ATTNC_FILL_ZERO = 0, ATTNC_FILL_NEG_INF = 1 };

/* An item function's return for a mod's load outside tensor argument `arg`:
 * ATTNC_ITEM_INDEX_FAILURE + arg (the launch returns ATTNC_ERR_INDEX). */
#define ATTNC_ITEM_INDEX_FAILURE 16
/* What a Halide pipeline's checked load of a mod input reports through
 * halide_error, followed by the input's tensor argument; the tile function
 * then returns ATTNC_ITEM_INDEX_FAILURE + arg. */
#define ATTNC_HALIDE_INDEX_FAILURE "attnc: index outside mod input argument "

/* A work item's function: computes the item at `index` (one coordinate per
 * dimension of its phase's items) on flat views of every tensor argument (in
 * argument order; an argument the tables do not list is an empty view) and
 * the params array. Returns 0, or non-zero when it failed (a score_mod or
 * mask_mod dividing by zero). */
typedef int32_t (*attnc_item_fn)(attnc_memref *tensors, attnc_memref_i64 *params,
                                 const int64_t *index);

/* A device phase's function: computes every work item at once (a GPU
 * kernel, its blocks the items), given the items' extents. device_id is the
 * tensors' DLDevice id, stream attnc_options' (or NULL). Returns 0, or a
 * non-zero code (lib/Runtime/HalideGrid.cpp). */
typedef int32_t (*attnc_device_fn)(attnc_memref *tensors, attnc_memref_i64 *params,
                                   const int64_t *extents, int64_t device_id,
                                   void *stream);

/* One phase of a launch: work items over an index space, each computed once.
 * Phases run in table order, each after the previous one has finished (a
 * split-KV decode: a phase over (batch, heads, splits), then a merge phase
 * over (batch, heads)). */
typedef struct attnc_phase_desc {
  const char *name;       /* "attention" */
  const char *items;      /* the index space, outermost first, comma-separated: a
                             symbol, or S/T for ceil(S / T): "batch,heads,seq_q/block_q" */
  const char *index;      /* the coordinates' names in messages: "b,h,q_tile" */
  attnc_item_fn item;     /* one of item (each item, on the runtime's threads) */
  attnc_device_fn device; /* and device (every item at once) is set */
} attnc_phase_desc;

/* The fields of attnc_kernel_desc, in order, as X(TYPE, NAME). This list is
 * the one definition of the descriptor: the struct below is generated from
 * it, and so is the LLVM struct that attnc writes into every kernel object
 * (lib/Conversion/Common/EmitCpuEntry.cpp, through KernelDescFields.h),
 * which fills each field by name. Types are int32_t, int64_t or pointers,
 * grouped in that order so the struct has no padding; abi_version stays
 * first, since it is read before anything else is trusted. The tables'
 * entries are listed the same way. */
#define ATTNC_KERNEL_DESC_FIELDS(X)                                            \
  X(int32_t, abi_version)   /* ATTNC_ABI_VERSION */                            \
  X(int32_t, device_type)   /* DLDeviceType of its tensors: kDLCPU, kDLCUDA */ \
  X(int32_t, num_symbols)                                                      \
  X(int32_t, num_tensors)                                                      \
  X(int32_t, num_phases)                                                       \
  X(int32_t, num_args)      /* tensor arguments of a launch (attnc_rt_run) */  \
  X(int32_t, num_params)    /* length of the params array */                   \
  X(int32_t, reserved)      /* 0 */                                            \
  X(int64_t, cpu_needs)     /* attnc_cpu_feature bits the code needs */        \
  X(const char *, name)     /* the kernel's symbol */                          \
  X(const char *, target)   /* the attnc target it was built for */            \
  X(const attnc_symbol_desc *, symbols)                                        \
  X(const attnc_tensor_desc *, tensors)                                        \
  X(const attnc_phase_desc *, phases)

#define ATTNC_SYMBOL_DESC_FIELDS(X)                                            \
  X(const char *, name)                                                        \
  X(int64_t, value) X(int64_t, max) X(int32_t, param) X(int32_t, flags)
#define ATTNC_TENSOR_DESC_FIELDS(X)                                            \
  X(const char *, name) X(const char *, dims) X(const char *, legend)          \
  X(const char *, about) X(const char *, strides) X(int32_t, arg)             \
  X(int32_t, flags) X(int32_t, dtype_code) X(int32_t, dtype_bits)             \
  X(int32_t, stride_param) X(int32_t, fill) X(const char *, bound)
#define ATTNC_PHASE_DESC_FIELDS(X)                                             \
  X(const char *, name) X(const char *, items) X(const char *, index)         \
  X(attnc_item_fn, item) X(attnc_device_fn, device)

#define ATTNC_KERNEL_DESC_MEMBER_(type, field) type field;
typedef struct attnc_kernel_desc {
  ATTNC_KERNEL_DESC_FIELDS(ATTNC_KERNEL_DESC_MEMBER_)
} attnc_kernel_desc;
#undef ATTNC_KERNEL_DESC_MEMBER_

/* Every kernel object exports, beside its entry `int NAME(...)`, the
 * descriptor that entry passes to the runtime: `const attnc_kernel_desc
 * *attnc_describe_NAME(void)` (a multi-target object: the variant this CPU
 * runs, or NULL with attnc_last_error() saying why none does). A host that
 * loads kernels at run time (the Python package) reads the tensors, dtypes
 * and shapes there and calls attnc_rt_run with the descriptor. */
#define ATTNC_DESCRIBE_PREFIX "attnc_describe_"
typedef const attnc_kernel_desc *(*attnc_describe_fn)(void);

/* Checks the tensor arguments (desc->num_args of them, at the positions the
 * kernel's tensor table gives) against the kernel's tables, then runs its
 * phases. An argument the tables do not list is ignored, and may be NULL.
 * opt may be NULL. Returns ATTNC_OK or an attnc_status, with
 * attnc_last_error() saying what is wrong; the checks are those of
 * attnc_rt_launch below. */
int attnc_rt_run(const attnc_kernel_desc *desc, const DLTensor *const *args,
                 const attnc_options *opt);

/* An attention kernel's launch: attnc_rt_run with args {q, k, v, out, lse}
 * (the kernel must take 5 tensor arguments). For attention kernels, q, k, v
 * and out have the kernel's dtype (float32, float16 or bfloat16); lse is
 * float32 whatever that dtype, and may be NULL when the kernel does not
 * output it (a given lse is then ignored: neither checked nor written).
 *
 * Checks run before any element is touched, in this order, and the first
 * failure is reported: descriptor and tables (ABI), the CPU's features
 * against cpu_needs (CPU), NULL tensors or data (NULL), devices (DEVICE),
 * dtypes (DTYPE), ranks and shapes, against the tensors' dims (SHAPE),
 * symbols' bounds and work-item counts (LIMIT), strides and byte_offset
 * (STRIDE). Tensors of a kDLCUDA kernel must all be on one device. NULL
 * strides mean compact row-major; otherwise strides must be >= 0 and, for a
 * UNIT_INNER tensor (q, k, v, out), the innermost (head_dim) one must be 1
 * (unless that extent is 1). byte_offset must be a multiple of the tensor's
 * element size (4 bytes for float32, 2 for float16 / bfloat16), and
 * data + byte_offset aligned to it. Then (ALIAS) each output must give each
 * element its own address and must not overlap another output or any input
 * (address ranges from shapes and strides; no kernel runs in place).
 *
 * Thread-safe, and launches from different threads run at once, each with
 * its own split of the work: a launch with num_threads = 1 runs on its
 * calling thread alone; one with more threads runs on its caller plus helper
 * threads (the runtime's pool, or the host's parallel-for: see
 * attnc_set_parallel_for). The pool's helpers are shared by the launches
 * running at once, so a launch whose helpers are busy with another runs with
 * fewer; results do not depend on how many threads took part. An item
 * function may itself launch a kernel (the nested launch runs on its calling
 * thread alone). On ATTNC_ERR_KERNEL, the outputs are partly written. */
int attnc_rt_launch(const attnc_kernel_desc *desc, const DLTensor *q,
                    const DLTensor *k, const DLTensor *v, DLTensor *out,
                    DLTensor *lse, const attnc_options *opt);

/* A host's parallel loop, for attnc_set_parallel_for: calls
 * body(closure, i) once for each i in [0, count), on any threads (the calling
 * one included), at once or one after another, and returns only after every
 * call has returned: 0, or non-zero if it could not run them. */
typedef int (*attnc_parallel_for_fn)(void *user, int32_t count,
                                     void (*body)(void *closure, int32_t index),
                                     void *closure);

/* Runs the helper threads of every later launch with num_threads other than 1
 * through `fn` (given `user` back) instead of the runtime's own pool: for a
 * host with a pool of its own (PyTorch's intra-op pool, a server's workers),
 * so that kernels and host share its threads instead of oversubscribing the
 * cores. count is the launch's thread count (num_threads; for 0, all cores;
 * never more than its work items). Each body call takes work items until
 * none are left, so any split of the calls over threads gives the same
 * results, and when fn returns 0 the caller runs whatever no call took. When
 * fn returns non-zero the launch returns ATTNC_ERR_KERNEL. fn = NULL goes
 * back to the runtime's pool. Process-wide (for each copy of the runtime: a
 * kernel library loaded with RTLD_LOCAL has its own) and thread-safe; a
 * launch uses the setting it found when it started. As Halide's
 * halide_set_custom_do_par_for. */
void attnc_set_parallel_for(attnc_parallel_for_fn fn, void *user);

/* A paged KV cache in FlashInfer's and OpenVINO's CSR form to the form
 * kernels with kv_cache = paged<page_size> take (vLLM's and FlashAttention's):
 * sequence b's pages are indices[indptr[b] .. indptr[b + 1]), its last page
 * holding last_page_len[b] keys (1 to page_size; 0 for a sequence without
 * pages). Writes block_table [batch, max_pages] (row b: its pages, then 0s)
 * and kv_lens [batch] ((pages - 1) * page_size + last_page_len[b]), both
 * compact int32. Returns 0, or ATTNC_ERR_INDEX / _NULL / _SHAPE / _LIMIT for
 * a malformed CSR (attnc_last_error says which entry); the page numbers are
 * checked against num_pages when the kernel is called. */
int attnc_block_table_from_csr(int64_t batch, const int32_t *indptr, const int32_t *indices,
                               const int32_t *last_page_len, int32_t page_size,
                               int64_t max_pages, int32_t *block_table, int32_t *kv_lens);

/* A kernel's exported entry point. */
typedef int (*attnc_entry_fn)(const DLTensor *q, const DLTensor *k, const DLTensor *v,
                              DLTensor *out, DLTensor *lse, const attnc_options *opt);

/* One code variant of a kernel in a multi-target object
 * (attnc --target=x86-64-avx512,x86-64-avx2,x86-64). */
typedef struct attnc_variant {
  const char *target; /* attnc target name */
  int64_t cpu_needs;  /* attnc_cpu_feature bits its code needs */
  attnc_entry_fn entry;
} attnc_variant;

/* The variant of `kernel` to run here: the one ATTNC_TARGET names when that
 * environment variable is set (read once), else the first, in the order
 * given (best first), whose cpu_needs attnc_cpu_features() has. NULL, with
 * attnc_last_error() saying why, when none fits. */
const attnc_variant *attnc_rt_select_variant(const attnc_variant *variants, int32_t count,
                                             const char *kernel);

/* A multi-target kernel's entry: runs the selected variant, or returns
 * ATTNC_ERR_CPU. */
int attnc_rt_dispatch(const attnc_variant *variants, int32_t count, const char *kernel,
                      const DLTensor *q, const DLTensor *k, const DLTensor *v, DLTensor *out,
                      DLTensor *lse, const attnc_options *opt);

#ifdef __cplusplus
}
#endif

#endif /* ATTNC_RUNTIME_ATTNC_RUNTIME_H */
