//===- Validate.cpp - Checks a launch's arguments against its kernel ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every message names the kernel, the argument, what is wrong and what would
// be right, because the caller is usually a Python user several layers away
// from the kernel's spec. The checks run category by category (all tensors'
// devices before any dtype, ...), most basic first, so that of several
// mistakes the one reported is the root cause: a CUDA tensor is reported as
// on the wrong device, not as having odd strides.
//
//===----------------------------------------------------------------------===//

#include "Validate.h"

#include "Aliasing.h"

#include "CpuFeatures.h"
#include "Describe.h"

#include <algorithm>
#include <iterator>

using namespace attnc::rt;

namespace {

constexpr const char *kTensorNames[NumTensors] = {"q", "k", "v", "out", "lse"};

constexpr DLDataType kFloat32 = {kDLFloat, 32, 1};

/// The dtypes a kernel may have (DLPack's spelling of f32, f16 and bf16): the
/// element types whose memrefs the runtime knows how to hand over.
constexpr DLDataType kKernelDtypes[] = {
    kFloat32, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1}};

/// One expected dimension: a fixed extent, or (value < 0) any extent >= 1
/// that the message calls `name`.
struct Expect {
  int64_t value;
  const char *name = nullptr;
};

bool mulOk(int64_t a, int64_t b, int64_t &r) {
  return !__builtin_mul_overflow(a, b, &r);
}
bool addOk(int64_t a, int64_t b, int64_t &r) {
  return !__builtin_add_overflow(a, b, &r);
}

bool sameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

class Validator {
public:
  Validator(const attnc_kernel_desc &d,
            const DLTensor *const (&tensors)[NumTensors])
      : desc(d), t(tensors), count(d.outputs & 2 ? NumTensors : Lse) {}

  attnc_status run(CheckedLaunch &launch);
  std::string message;

private:
  attnc_status fail(attnc_status status, const std::string &text) {
    message = cat("kernel '", kernelName(desc), "': ", text);
    return status;
  }
  std::string legend(int id) const;
  /// Where batch, head and seq sit among the tensor's dimensions.
  const int *logicalDims(int id) const;
  int rank(int id) const { return id == Lse ? 3 : 4; }
  DLDataType dtype(int id) const {
    return tensorDtype(desc, static_cast<TensorId>(id));
  }

  attnc_status checkPresence();
  attnc_status checkDevices();
  attnc_status checkDtypes();
  attnc_status checkRanks();
  attnc_status checkShape(int id, Expect b, Expect h, Expect s,
                          const char *note);
  attnc_status checkShapes(CheckedLaunch &launch);
  attnc_status checkData();
  attnc_status checkLimits(CheckedLaunch &launch);
  attnc_status checkStrides(int id, TensorView &view);
  attnc_status checkAliasing(const CheckedLaunch &launch);

  const attnc_kernel_desc &desc;
  const DLTensor *const (&t)[NumTensors];
  int count; // tensors to check: lse only when the kernel outputs it
};

} // namespace

std::string Validator::legend(int id) const {
  bool bshd = desc.layout == 1;
  switch (id) {
  case Q:
  case Out:
    return bshd ? "bshd: batch, seq_q, heads, head_dim"
                : "bhsd: batch, heads, seq_q, head_dim";
  case K:
  case V:
    return bshd ? "bshd: batch, seq_kv, kv_heads, head_dim"
                : "bhsd: batch, kv_heads, seq_kv, head_dim";
  default:
    return "batch, heads, seq_q";
  }
}

const int *Validator::logicalDims(int id) const {
  static const int bhsd[3] = {0, 1, 2}, bshd[3] = {0, 2, 1};
  return id != Lse && desc.layout == 1 ? bshd : bhsd;
}

attnc_status Validator::checkPresence() {
  for (int id = 0; id < count; ++id) {
    if (!t[id] && id == Lse)
      return fail(ATTNC_ERR_NULL, cat("lse is NULL, but this kernel outputs "
                                      "the log-sum-exp and needs a ",
                                      dtypeName(dtype(Lse)), " tensor for it (",
                                      legend(Lse), ")"));
    if (!t[id])
      return fail(ATTNC_ERR_NULL,
                  cat(kTensorNames[id], " is NULL; pass a ",
                      dtypeName(dtype(id)), " ",
                      deviceNoun(desc.device_type), " tensor (", legend(id),
                      ")"));
  }
  return ATTNC_OK;
}

/// NULL data only on a tensor without elements: PyTorch's empty tensors may
/// have no storage (checkStrides gives them an empty view).
attnc_status Validator::checkData() {
  for (int id = 0; id < count; ++id)
    if (!t[id]->data && std::none_of(t[id]->shape, t[id]->shape + rank(id),
                                     [](int64_t d) { return d == 0; }))
      return fail(ATTNC_ERR_NULL, cat(kTensorNames[id], " has NULL data; a tensor with ",
                                      "elements must point at them"));
  return ATTNC_OK;
}

attnc_status Validator::checkDevices() {
  for (int id = 0; id < count; ++id) {
    DLDevice dev = t[id]->device;
    if (dev.device_type != desc.device_type)
      return fail(ATTNC_ERR_DEVICE,
                  cat(kTensorNames[id], " is on device ",
                      deviceName(dev.device_type), " (", int(dev.device_type),
                      "), id ", dev.device_id, ", but this kernel runs on ",
                      deviceName(desc.device_type), " (", desc.device_type,
                      ") and accepts only ", deviceName(desc.device_type),
                      " tensors; ",
                      desc.device_type == kDLCPU
                          ? "copy it to host memory first"
                          : "copy it to that device first"));
    if (dev.device_id != t[Q]->device.device_id)
      return fail(ATTNC_ERR_DEVICE,
                  cat(kTensorNames[id], " is on ", deviceName(dev.device_type),
                      " device ", dev.device_id, " but q on device ",
                      t[Q]->device.device_id,
                      "; a kernel runs on one device, with every tensor there"));
  }
  return ATTNC_OK;
}

attnc_status Validator::checkDtypes() {
  for (int id = 0; id < count; ++id) {
    DLDataType dt = t[id]->dtype, want = dtype(id);
    if (!sameDtype(dt, want))
      return fail(ATTNC_ERR_DTYPE,
                  cat(kTensorNames[id], " has dtype ", dtypeName(dt),
                      " but needs ", dtypeName(want), " (",
                      dtypeCodeName(want.code), ", ", unsigned(want.bits),
                      " bits, 1 lane)",
                      id == Lse ? ": the log-sum-exp is float32 whatever the "
                                  "kernel's dtype"
                                : ""));
  }
  return ATTNC_OK;
}

attnc_status Validator::checkRanks() {
  for (int id = 0; id < count; ++id) {
    if (t[id]->ndim != rank(id))
      return fail(ATTNC_ERR_SHAPE, cat(kTensorNames[id], " has ", t[id]->ndim,
                                       " dimensions but needs ", rank(id), " (",
                                       legend(id), ")"));
    if (!t[id]->shape)
      return fail(ATTNC_ERR_SHAPE,
                  cat(kTensorNames[id], " has a NULL shape array"));
  }
  return ATTNC_OK;
}

attnc_status Validator::checkShape(int id, Expect b, Expect h, Expect s,
                                   const char *note) {
  const int *pos = logicalDims(id);
  Expect want[4] = {{0}, {0}, {0}, {desc.head_dim}};
  want[pos[0]] = b;
  want[pos[1]] = h;
  want[pos[2]] = s;
  const int64_t *shape = t[id]->shape;
  std::string needs = "[", tooSmall;
  bool ok = true;
  for (int i = 0; i < rank(id); ++i) {
    const Expect &e = want[i];
    needs += (i ? ", " : "") + (e.value < 0 ? e.name : std::to_string(e.value));
    // batch and the lengths may be 0 (an empty launch, as PyTorch allows).
    if (e.value >= 0 ? shape[i] == e.value : shape[i] >= 0)
      continue;
    ok = false;
    if (e.value < 0 && tooSmall.empty())
      tooSmall = cat(" with ", e.name, " >= 0");
  }
  if (ok)
    return ATTNC_OK;
  return fail(ATTNC_ERR_SHAPE,
              cat(kTensorNames[id], " has shape ", formatDims(shape, rank(id)),
                  " but needs ", needs, "]", tooSmall, note, " (", legend(id),
                  ")"));
}

attnc_status Validator::checkShapes(CheckedLaunch &launch) {
  Expect batch = {-1, "batch"};
  if (attnc_status s =
          checkShape(Q, batch, {desc.num_heads}, {-1, "seq_q"}, ""))
    return s;
  const int *qPos = logicalDims(Q);
  launch.batch = t[Q]->shape[qPos[0]];
  launch.deviceId = t[Q]->device.device_id;
  launch.seqQ = t[Q]->shape[qPos[2]];
  Expect b = {launch.batch}, sq = {launch.seqQ};
  if (attnc_status s =
          checkShape(K, b, {desc.num_kv_heads}, {-1, "seq_kv"}, ""))
    return s;
  launch.seqKV = t[K]->shape[logicalDims(K)[2]];
  Expect skv = {launch.seqKV};
  if (attnc_status s =
          checkShape(V, b, {desc.num_kv_heads}, skv, ", the shape of k"))
    return s;
  if (attnc_status s =
          checkShape(Out, b, {desc.num_heads}, sq, ", the shape of q"))
    return s;
  if (count > Lse)
    return checkShape(Lse, b, {desc.num_heads}, sq, "");
  return ATTNC_OK;
}

/// The longest sequence a launch takes: 2^32 positions (terabytes per head;
/// longer ones exist only as zero-stride views, whose work would not end).
constexpr int64_t kMaxSeq = int64_t(1) << 32;

attnc_status Validator::checkLimits(CheckedLaunch &launch) {
  if (launch.seqQ > kMaxSeq || launch.seqKV > kMaxSeq)
    return fail(ATTNC_ERR_LIMIT, cat("seq_q = ", launch.seqQ, " and seq_kv = ", launch.seqKV,
                                     " must be at most 2^32 (", kMaxSeq, ")"));
  if (desc.max_seq_q > 0 && launch.seqQ > desc.max_seq_q)
    return fail(ATTNC_ERR_LIMIT,
                cat("q has seq_q = ", launch.seqQ,
                    " but the kernel was compiled for at most max_seq_q = ",
                    desc.max_seq_q));
  if (desc.max_seq_kv > 0 && launch.seqKV > desc.max_seq_kv)
    return fail(ATTNC_ERR_LIMIT,
                cat("k and v have seq_kv = ", launch.seqKV,
                    " but the kernel was compiled for at most max_seq_kv = ",
                    desc.max_seq_kv));
  launch.tiles = launch.seqQ / desc.block_q + (launch.seqQ % desc.block_q != 0);
  int64_t rows;
  if (!mulOk(launch.batch, desc.num_heads, rows) ||
      !mulOk(rows, launch.tiles, launch.items))
    return fail(ATTNC_ERR_LIMIT,
                cat("batch ", launch.batch, " x ", desc.num_heads, " heads x ",
                    launch.tiles,
                    " query tiles is more work items than an int64 can count"));
  return ATTNC_OK;
}

attnc_status Validator::checkStrides(int id, TensorView &view) {
  const DLTensor &x = *t[id];
  if (!x.data) // empty (checkData)
    return ATTNC_OK;
  const char *name = kTensorNames[id];
  int n = rank(id);
  int64_t st[4];
  for (int i = n - 1; i >= 0; --i) {
    // NULL strides: compact row-major, as DLPack defines them.
    if (x.strides)
      st[i] = x.strides[i];
    else if (i == n - 1)
      st[i] = 1;
    else if (!mulOk(st[i + 1], x.shape[i + 1], st[i]))
      return fail(ATTNC_ERR_SHAPE,
                  cat(name, " has shape ", formatDims(x.shape, n),
                      ", more elements than an int64 can index"));
  }
  // A head_dim of extent 1 is never stepped over, so its stride is moot
  // (frameworks report arbitrary strides for extent-1 dimensions).
  if (id != Lse && x.shape[3] > 1 && st[3] != 1)
    return fail(ATTNC_ERR_STRIDE,
                cat(name, " has strides ", formatDims(st, n),
                    " but its last dimension (head_dim) must have stride 1: "
                    "the kernel reads each row of head_dim values "
                    "contiguously"));
  for (int i = 0; i < n; ++i)
    if (st[i] < 0)
      return fail(ATTNC_ERR_STRIDE,
                  cat(name, " has strides ", formatDims(st, n),
                      " with a negative stride in dimension ", i,
                      "; all strides must be >= 0"));
  // Every kernel dtype is naturally aligned to its size (4 bytes for
  // float32, 2 for float16 and bfloat16), and the kernel loads elements at
  // that alignment.
  const int64_t elemBytes = dtype(id).bits / 8;
  if (x.byte_offset % elemBytes != 0)
    return fail(ATTNC_ERR_STRIDE,
                cat(name, " has byte_offset ", x.byte_offset,
                    ", which is not a multiple of the element size (",
                    elemBytes, " bytes)"));
  // data + byte_offset must stay in the lower half of the address space: it must not wrap
  // (a byte_offset near 2^64 would point before the buffer), and the upper half is the
  // operating system's on every 64-bit target (x86-64, AArch64), never a process's memory.
  uintptr_t begin = reinterpret_cast<uintptr_t>(x.data);
  if (x.byte_offset > uintptr_t(INTPTR_MAX) - begin)
    return fail(ATTNC_ERR_STRIDE, cat(name, "'s data + byte_offset ", x.byte_offset,
                                      " lies past the end of a process's address space"));
  char *base = static_cast<char *>(x.data) + x.byte_offset;
  if (reinterpret_cast<uintptr_t>(base) % elemBytes != 0)
    return fail(ATTNC_ERR_STRIDE,
                cat(name, "'s first element (data + byte_offset) is not ",
                    "aligned to ", elemBytes, " bytes, the size of its ",
                    dtypeName(dtype(id)), " elements"));
  const int *pos = logicalDims(id);
  for (int i = 0; i < 3; ++i)
    view.strides[i] = st[pos[i]];
  // An empty tensor has no elements to reach: an empty view.
  for (int i = 0; i < n; ++i)
    if (x.shape[i] == 0) {
      view.base = base;
      view.size = 0;
      return ATTNC_OK;
    }
  // The flat view covers the largest reachable offset; bound it so that
  // offset * element size cannot overflow in the kernel's address arithmetic.
  int64_t last = 0, step;
  for (int i = 0; i < n; ++i)
    if (!mulOk(x.shape[i] - 1, st[i], step) || !addOk(last, step, last) ||
        last > INT64_MAX / elemBytes - 1)
      return fail(ATTNC_ERR_STRIDE,
                  cat(name, " has shape ", formatDims(x.shape, n),
                      " and strides ", formatDims(st, n),
                      ", which reach beyond what an int64 byte offset can "
                      "address"));
  if (uintptr_t(last + 1) * elemBytes >
      uintptr_t(INTPTR_MAX) - reinterpret_cast<uintptr_t>(base))
    return fail(ATTNC_ERR_STRIDE, cat(name, "'s elements reach past the end of the address "
                                      "space"));
  view.base = base;
  view.size = last + 1;
  return ATTNC_OK;
}

attnc_status Validator::run(CheckedLaunch &launch) {
  attnc_status s;
  if ((s = checkPresence()) || (s = checkDevices()) || (s = checkDtypes()) ||
      (s = checkRanks()) || (s = checkShapes(launch)) || (s = checkData()) ||
      (s = checkLimits(launch)))
    return s;
  for (int id = 0; id < count; ++id)
    if ((s = checkStrides(id, launch.views[id])))
      return s;
  launch.hasLse = count > Lse;
  return checkAliasing(launch);
}

attnc_status Validator::checkAliasing(const CheckedLaunch &launch) {
  ByteRange range[NumTensors];
  for (int id = 0; id < count; ++id) {
    uintptr_t begin = reinterpret_cast<uintptr_t>(launch.views[id].base);
    range[id] = {begin, begin + uintptr_t(launch.views[id].size) * (dtype(id).bits / 8)};
  }
  for (int id = Out; id < count; ++id) {
    const DLTensor &x = *t[id];
    if (launch.views[id].size == 0) // no element to write
      continue;
    int64_t compact[4];
    compact[rank(id) - 1] = 1;
    for (int i = rank(id) - 2; i >= 0; --i)
      compact[i] = compact[i + 1] * x.shape[i + 1];
    if (x.strides && !injective(x.shape, x.strides, rank(id)))
      return fail(ATTNC_ERR_ALIAS,
                  cat(kTensorNames[id], " has shape ", formatDims(x.shape, rank(id)),
                      " and strides ", formatDims(x.strides, rank(id)),
                      ", which map different elements to one address; an output needs "
                      "distinct addresses (e.g. strides ",
                      formatDims(compact, rank(id)), ")"));
    for (int other = 0; other < count; ++other)
      if (other != id && !(other >= Out && other < id) && launch.views[other].size &&
          range[id].overlaps(range[other]))
        return fail(ATTNC_ERR_ALIAS,
                    cat(kTensorNames[id], " overlaps ", kTensorNames[other],
                        " in memory (their address ranges intersect); outputs must not "
                        "share memory with each other or with an input, and the kernel "
                        "does not run in place"));
  }
  return ATTNC_OK;
}

static bool isKernelDtype(int32_t code, int32_t bits) {
  for (DLDataType dt : kKernelDtypes)
    if (code == dt.code && bits == dt.bits)
      return true;
  return false;
}

/// "float32 (kDLFloat = 2, 32 bits), ... and bfloat16 (kDLBfloat = 4, 16
/// bits)", from the one list of kernel dtypes.
static std::string kernelDtypeList() {
  std::string list;
  size_t n = std::size(kKernelDtypes);
  for (size_t i = 0; i < n; ++i)
    list += cat(i == 0 ? "" : i + 1 < n ? ", " : " and ",
                dtypeName(kKernelDtypes[i]), " (",
                dtypeCodeName(kKernelDtypes[i].code), " = ",
                int(kKernelDtypes[i].code), ", ",
                unsigned(kKernelDtypes[i].bits), " bits)");
  return list;
}

/// The descriptor's own consistency, which a kernel built by a matching
/// attnc always has; a failure means a corrupt or hand-made descriptor.
static std::string checkDescriptor(const attnc_kernel_desc &d) {
  if (!d.tile == !d.grid)
    return "it must have one of a tile function and a grid function";
  // Tile functions are called on this runtime's host threads; grid
  // functions take host or CUDA tensors.
  if (d.device_type != kDLCPU && !(d.grid && d.device_type == kDLCUDA))
    return cat("device_type = ", deviceName(d.device_type), " (",
               d.device_type, "), but this runtime only launches kDLCPU (",
               int(kDLCPU), ") kernels, and grid kernels on kDLCUDA (",
               int(kDLCUDA), ")");
  if (d.num_heads < 1 || d.num_kv_heads < 1 || d.num_heads % d.num_kv_heads)
    return cat("num_heads = ", d.num_heads,
               " and num_kv_heads = ", d.num_kv_heads,
               " must be >= 1, with num_heads a multiple of num_kv_heads");
  if (d.head_dim < 1 || d.block_q < 1)
    return cat("head_dim = ", d.head_dim, " and block_q = ", d.block_q,
               " must be >= 1");
  if (!isKernelDtype(d.dtype_code, d.dtype_bits))
    return cat("dtype_code = ", d.dtype_code, " and dtype_bits = ",
               d.dtype_bits, ", but this runtime only runs ",
               kernelDtypeList(), " kernels");
  if (d.layout != 0 && d.layout != 1)
    return cat("layout = ", d.layout, " must be 0 (bhsd) or 1 (bshd)");
  if (!(d.outputs & 1))
    return cat("outputs = ", d.outputs, " must include bit 0 (out)");
  return "";
}

DLDataType attnc::rt::kernelDtype(const attnc_kernel_desc &desc) {
  // Only called once checkDescriptor accepted the dtype, so the narrowing
  // casts are exact.
  return {static_cast<uint8_t>(desc.dtype_code),
          static_cast<uint8_t>(desc.dtype_bits), 1};
}

DLDataType attnc::rt::tensorDtype(const attnc_kernel_desc &desc, TensorId id) {
  return id == Lse ? kFloat32 : kernelDtype(desc);
}

const char *attnc::rt::kernelName(const attnc_kernel_desc &desc) {
  return desc.name ? desc.name : "(unnamed)";
}

attnc_status attnc::rt::validateLaunch(const attnc_kernel_desc *desc,
                                       const DLTensor *q, const DLTensor *k,
                                       const DLTensor *v, const DLTensor *out,
                                       const DLTensor *lse,
                                       CheckedLaunch &launch,
                                       std::string &message) {
  if (!desc) {
    message = "attnc_rt_launch: the kernel descriptor is NULL";
    return ATTNC_ERR_ABI;
  }
  // Only abi_version is read before it matches: the rest of a descriptor
  // from another ABI, its name included, may sit at other offsets.
  if (desc->abi_version != ATTNC_ABI_VERSION) {
    message =
        cat("attnc_rt_launch: the kernel was built for runtime ABI version ",
            desc->abi_version, " but this runtime implements version ",
            ATTNC_ABI_VERSION, "; rebuild the kernel with a matching attnc");
    return ATTNC_ERR_ABI;
  }
  std::string bad = checkDescriptor(*desc);
  if (!bad.empty()) {
    message =
        cat("kernel '", kernelName(*desc), "': malformed descriptor: ", bad);
    return ATTNC_ERR_ABI;
  }
  if (std::string bad = cpuFeaturesError(); !bad.empty()) {
    message = cat("kernel '", kernelName(*desc), "': ", bad);
    return ATTNC_ERR_CPU;
  }
  uint64_t missing = uint64_t(desc->cpu_needs) & ~cpuFeatures();
  if (missing) {
    message = cat("kernel '", kernelName(*desc), "' was built for ",
                  desc->target ? desc->target : "a target", ", whose code needs ",
                  featureNames(desc->cpu_needs), "; this CPU lacks ", featureNames(missing),
                  " (compile it for a target this CPU runs; on x86-64, for several in one "
                  "object: attnc --target=x86-64-avx512,x86-64-avx2,x86-64)");
    return ATTNC_ERR_CPU;
  }
  const DLTensor *const tensors[NumTensors] = {q, k, v, out, lse};
  Validator validator(*desc, tensors);
  attnc_status status = validator.run(launch);
  message = std::move(validator.message);
  return status;
}
