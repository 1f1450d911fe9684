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
// on the wrong device, not as having odd strides. Tensors are checked in the
// order of the kernel's tensor table, which is also the order in which they
// bind the symbols (batch, seq_q, ...) their dimensions name.
//
//===----------------------------------------------------------------------===//

#include "Validate.h"

#include "Aliasing.h"

#include "CpuFeatures.h"
#include "CudaDriver.h"
#include "Describe.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace attnc::rt;

namespace {

/// The longest extent a bound symbol takes: 2^32 (terabytes per head for a
/// sequence; larger ones exist only as zero-stride views, whose work would
/// not end).
constexpr int64_t kMaxExtent = int64_t(1) << 32;
/// Bytes of scratch one launch may allocate (a split-KV decode's partials are
/// splits x its output; beyond this a shape is an error, not a huge malloc).
constexpr int64_t kMaxScratch = int64_t(1) << 36;

bool mulOk(int64_t a, int64_t b, int64_t &r) { return !__builtin_mul_overflow(a, b, &r); }
bool addOk(int64_t a, int64_t b, int64_t &r) { return !__builtin_add_overflow(a, b, &r); }

bool sameDtype(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

class Validator {
public:
  Validator(const attnc_kernel_desc &d, const DLTensor *const *args, CheckedLaunch &launch,
            void *stream)
      : desc(d), args(args), launch(launch), tables(launch.tables), stream(stream) {
    for (int i = 0; i < d.num_tensors; ++i) {
      // An optional input passed as NULL is not checked, and its view stays empty.
      bool absent = (d.tensors[i].flags & ATTNC_TENSOR_OPTIONAL) && !args[d.tensors[i].arg];
      if (!absent)
        (isScratch(d.tensors[i]) ? scratch : arguments).push(i);
    }
  }

  attnc_status run();
  std::string message;

private:
  attnc_status fail(attnc_status status, const std::string &text) {
    message = cat("kernel '", kernelName(desc), "': ", text);
    return status;
  }
  const attnc_tensor_desc &spec(int i) const { return desc.tensors[i]; }
  const DLTensor &arg(int i) const { return *args[spec(i).arg]; }
  TensorView &view(int i) { return launch.views[spec(i).arg]; }
  int rank(int i) const { return tables.tensors[i].rank; }
  const char *symbolName(int s) const { return desc.symbols[s].name; }
  bool known(int s) const { return desc.symbols[s].value >= 0 || bound[s]; }

  attnc_status checkPresence();
  attnc_status checkDevices();
  attnc_status checkDtypes();
  attnc_status checkRanks();
  attnc_status checkShape(int i);
  attnc_status checkShapes();
  attnc_status checkData();
  attnc_status checkLimit(int s);
  attnc_status checkLimits();
  attnc_status countItems();
  attnc_status checkStrides(int i);
  attnc_status checkAliasing();
  const int32_t *hostEntries(int i, attnc_status &status);
  attnc_status checkEntries(int i);
  attnc_status checkSteps(int i);
  attnc_status checkWithinSteps(int i);
  void fillParams();

  attnc_status layoutScratch();

  /// Indices of tensor table entries, in table order.
  struct IndexList {
    int at[kMaxTensors] = {}, count = 0;
    void push(int i) { at[count++] = i; }
    const int *begin() const { return at; }
    const int *end() const { return at + count; }
  };

  const attnc_kernel_desc &desc;
  const DLTensor *const *args;
  CheckedLaunch &launch;
  Tables &tables;
  void *stream; // a device kernel's: bound entries are copied to the host on it
  std::vector<int32_t> hostCopies[kMaxTensors]; // those copies, by table entry
  IndexList arguments, scratch; // tensors the caller passes; the runtime's own
  bool bound[kMaxSymbols] = {};  // symbols the tensors' dims or steps bound so far
};

} // namespace

attnc_status Validator::checkPresence() {
  for (int i : arguments) {
    if (args[spec(i).arg])
      continue;
    std::string wanted = cat(dtypeName(tensorDtype(spec(i))), " ", deviceNoun(desc.device_type),
                             " tensor");
    if (spec(i).flags & ATTNC_TENSOR_OUTPUT)
      return fail(ATTNC_ERR_NULL, cat(spec(i).name, " is NULL, but this kernel outputs ",
                                      spec(i).name, " and needs a ", wanted, " for it (",
                                      spec(i).legend, ")"));
    const char *article = std::strchr("aeiou", wanted[0]) ? "an " : "a ";
    return fail(ATTNC_ERR_NULL,
                cat(spec(i).name, " is NULL; pass ", article, wanted, " (", spec(i).legend, ")"));
  }
  return ATTNC_OK;
}

/// NULL data only on a tensor without elements: PyTorch's empty tensors may
/// have no storage (checkStrides gives them an empty view).
attnc_status Validator::checkData() {
  for (int i : arguments)
    if (!arg(i).data && std::none_of(arg(i).shape, arg(i).shape + rank(i),
                                     [](int64_t d) { return d == 0; }))
      return fail(ATTNC_ERR_NULL, cat(spec(i).name, " has NULL data; a tensor with ",
                                      "elements must point at them"));
  return ATTNC_OK;
}

attnc_status Validator::checkDevices() {
  const DLTensor &first = arg(0);
  for (int i : arguments) {
    DLDevice dev = arg(i).device;
    if (dev.device_type != desc.device_type)
      return fail(ATTNC_ERR_DEVICE,
                  cat(spec(i).name, " is on device ", deviceName(dev.device_type), " (",
                      int(dev.device_type), "), id ", dev.device_id,
                      ", but this kernel runs on ", deviceName(desc.device_type), " (",
                      desc.device_type, ") and accepts only ", deviceName(desc.device_type),
                      " tensors; ",
                      desc.device_type == kDLCPU ? "copy it to host memory first"
                                                 : "copy it to that device first"));
    if (dev.device_id != first.device.device_id)
      return fail(ATTNC_ERR_DEVICE,
                  cat(spec(i).name, " is on ", deviceName(dev.device_type), " device ",
                      dev.device_id, " but ", spec(0).name, " on device ",
                      first.device.device_id,
                      "; a kernel runs on one device, with every tensor there"));
  }
  launch.deviceId = first.device.device_id;
  return ATTNC_OK;
}

attnc_status Validator::checkDtypes() {
  for (int i : arguments) {
    DLDataType dt = arg(i).dtype, want = tensorDtype(spec(i));
    if (!sameDtype(dt, want))
      return fail(ATTNC_ERR_DTYPE,
                  cat(spec(i).name, " has dtype ", dtypeName(dt), " but needs ",
                      dtypeName(want), " (", dtypeCodeName(want.code), ", ",
                      unsigned(want.bits), " bits, 1 lane)",
                      spec(i).about ? ": " : "", spec(i).about ? spec(i).about : ""));
  }
  return ATTNC_OK;
}

attnc_status Validator::checkRanks() {
  for (int i : arguments) {
    if (arg(i).ndim != rank(i))
      return fail(ATTNC_ERR_SHAPE, cat(spec(i).name, " has ", arg(i).ndim,
                                       " dimensions but needs ", rank(i), " (",
                                       spec(i).legend, ")"));
    if (!arg(i).shape)
      return fail(ATTNC_ERR_SHAPE, cat(spec(i).name, " has a NULL shape array"));
  }
  return ATTNC_OK;
}

/// Checks tensor i's shape against the symbols known so far, then binds the
/// ones it is the first to name. Extents may be 0 (an empty launch, as
/// PyTorch allows).
attnc_status Validator::checkShape(int i) {
  const TensorShape &shape = tables.tensors[i];
  const int64_t *extents = arg(i).shape;
  // What was known before this tensor: the message says what it needed.
  bool wasKnown[kMaxRank];
  for (int n = 0; n < shape.rank; ++n)
    wasKnown[n] = known(shape.dims[n]);
  // A known symbol's extent: scale * value + plus, never below 0.
  auto extent = [&](int n) {
    return std::max<int64_t>(0, shape.dimsScale[n] * launch.symbols[shape.dims[n]] +
                                    shape.dimsPlus[n]);
  };
  bool ok = true;
  for (int n = 0; n < shape.rank; ++n) {
    int s = shape.dims[n], plus = shape.dimsPlus[n];
    if (known(s) ? extents[n] == extent(n) : extents[n] >= plus) {
      if (!known(s)) {
        launch.symbols[s] = extents[n] - plus;
        bound[s] = true;
      }
      continue;
    }
    ok = false;
  }
  if (ok)
    return ATTNC_OK;
  // The message is built only for a failure: the success path is every launch's.
  std::string needs = "[", tooSmall;
  for (int n = 0; n < shape.rank; ++n) {
    int s = shape.dims[n], plus = shape.dimsPlus[n];
    std::string term = plus ? cat(symbolName(s), "+", plus) : std::string(symbolName(s));
    needs += cat(n ? ", " : "", wasKnown[n] ? std::to_string(extent(n)) : term);
    if (!wasKnown[n] && extents[n] < plus && tooSmall.empty())
      tooSmall = cat(" with ", symbolName(s), " >= 0");
  }
  return fail(ATTNC_ERR_SHAPE,
              cat(spec(i).name, " has shape ", formatDims(extents, shape.rank), " but needs ",
                  needs, "]", tooSmall,
                  shape.sameAs >= 0 ? cat(", the shape of ", spec(shape.sameAs).name) : "",
                  " (", spec(i).legend, ")"));
}

/// Every argument's shape but those that wait for steps (afterSteps).
attnc_status Validator::checkShapes() {
  for (int s = 0; s < desc.num_symbols; ++s)
    if (desc.symbols[s].value >= 0)
      launch.symbols[s] = desc.symbols[s].value;
  for (int i : arguments)
    if (!tables.tensors[i].afterSteps)
      if (attnc_status s = checkShape(i))
        return s;
  return ATTNC_OK;
}

/// Bound symbol s within 2^32 and its max; notes a REDUCED one of 0.
attnc_status Validator::checkLimit(int s) {
  const attnc_symbol_desc &sym = desc.symbols[s];
  int64_t value = launch.symbols[s];
  const char *binder = spec(tables.boundBy[s]).name;
  // A symbol the steps of offsets bind is a longest sequence (built on failure only).
  auto what = [&] { return cat(tables.bySteps[s] ? "a sequence of " : "", sym.name); };
  if (value > kMaxExtent)
    return fail(ATTNC_ERR_LIMIT, cat(binder, " has ", what(), " = ", value,
                                     ", which must be at most 2^32 (", kMaxExtent, ")"));
  if (sym.max > 0 && value > sym.max)
    return fail(ATTNC_ERR_LIMIT, cat(binder, " has ", what(), " = ", value,
                                     " but the kernel was compiled for at most max_",
                                     sym.name, " = ", sym.max));
  if (launch.reducedZero < 0 && (sym.flags & ATTNC_SYMBOL_REDUCED) && value == 0)
    launch.reducedZero = s;
  return ATTNC_OK;
}

/// The symbols the tensors' dims bound; those of steps come with the entries.
attnc_status Validator::checkLimits() {
  for (int s = 0; s < desc.num_symbols; ++s)
    if (desc.symbols[s].value < 0 && !tables.bySteps[s])
      if (attnc_status status = checkLimit(s))
        return status;
  return ATTNC_OK;
}

/// Each phase's extents: a symbol's value, or ceil(S / T).
attnc_status Validator::countItems() {
  for (int p = 0; p < desc.num_phases; ++p) {
    PhaseItems &items = launch.phases[p];
    items.rank = tables.phaseRank[p];
    items.items = 1;
    bool overflow = false;
    for (int c = 0; c < items.rank; ++c) {
      const Term &t = tables.phaseItems[p][c];
      int64_t n = launch.symbols[t.symbol];
      if (t.divisor >= 0) {
        int64_t by = launch.symbols[t.divisor];
        n = n / by + (n % by != 0);
      }
      items.extents[c] = n;
      overflow |= !mulOk(items.items, n, items.items);
    }
    if (!overflow && addOk(launch.totalItems, items.items, launch.totalItems))
      continue;
    std::string product;
    for (int c = 0; c < items.rank; ++c)
      product += cat(c ? " x " : "", items.extents[c], " (", indexName(desc.phases[p], c), ")");
    return fail(ATTNC_ERR_LIMIT, cat("phase '", desc.phases[p].name, "' has ", product,
                                     " work items, more than an int64 can count"));
  }
  return ATTNC_OK;
}

attnc_status Validator::checkStrides(int i) {
  const DLTensor &x = arg(i);
  TensorView &v = view(i);
  int n = rank(i);
  v.rank = n;
  std::copy(x.shape, x.shape + n, v.shape);
  if (!x.data) // empty (checkData)
    return ATTNC_OK;
  const char *name = spec(i).name;
  int64_t *st = v.strides;
  for (int d = n - 1; d >= 0; --d) {
    // NULL strides: compact row-major, as DLPack defines them.
    if (x.strides)
      st[d] = x.strides[d];
    else if (d == n - 1)
      st[d] = 1;
    else if (!mulOk(st[d + 1], x.shape[d + 1], st[d]))
      return fail(ATTNC_ERR_SHAPE, cat(name, " has shape ", formatDims(x.shape, n),
                                       ", more elements than an int64 can index"));
  }
  // An innermost dimension of extent 1 is never stepped over, so its stride
  // is moot (frameworks report arbitrary strides for extent-1 dimensions).
  if ((spec(i).flags & ATTNC_TENSOR_UNIT_INNER) && x.shape[n - 1] > 1 && st[n - 1] != 1) {
    const char *inner = symbolName(tables.tensors[i].dims[n - 1]);
    return fail(ATTNC_ERR_STRIDE,
                cat(name, " has strides ", formatDims(st, n), " but its last dimension (",
                    inner, ") must have stride 1: the kernel reads each row of ", inner,
                    " values contiguously"));
  }
  for (int d = 0; d < n; ++d)
    if (st[d] < 0)
      return fail(ATTNC_ERR_STRIDE, cat(name, " has strides ", formatDims(st, n),
                                        " with a negative stride in dimension ", d,
                                        "; all strides must be >= 0"));
  // Every kernel dtype is naturally aligned to its size (4 bytes for
  // float32, 2 for float16 and bfloat16), and the kernel loads elements at
  // that alignment.
  const DLDataType dtype = tensorDtype(spec(i));
  const int64_t elemBytes = dtype.bits / 8;
  if (x.byte_offset % elemBytes != 0)
    return fail(ATTNC_ERR_STRIDE, cat(name, " has byte_offset ", x.byte_offset,
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
    return fail(ATTNC_ERR_STRIDE, cat(name, "'s first element (data + byte_offset) is not ",
                                      "aligned to ", elemBytes, " bytes, the size of its ",
                                      dtypeName(dtype), " elements"));
  v.base = base;
  // An empty tensor has no elements to reach: an empty view.
  if (std::any_of(x.shape, x.shape + n, [](int64_t e) { return e == 0; }))
    return ATTNC_OK;
  // The flat view covers the largest reachable offset; bound it so that
  // offset * element size cannot overflow in the kernel's address arithmetic.
  int64_t last = 0, step;
  for (int d = 0; d < n; ++d)
    if (!mulOk(x.shape[d] - 1, st[d], step) || !addOk(last, step, last) ||
        last > INT64_MAX / elemBytes - 1)
      return fail(ATTNC_ERR_STRIDE, cat(name, " has shape ", formatDims(x.shape, n),
                                        " and strides ", formatDims(st, n),
                                        ", which reach beyond what an int64 byte offset can "
                                        "address"));
  if (uintptr_t(last + 1) * elemBytes > uintptr_t(INTPTR_MAX) - reinterpret_cast<uintptr_t>(base))
    return fail(ATTNC_ERR_STRIDE, cat(name, "'s elements reach past the end of the address "
                                      "space"));
  v.size = last + 1;
  return ATTNC_OK;
}

attnc_status Validator::checkAliasing() {
  ByteRange range[kMaxTensors];
  for (int i : arguments) {
    uintptr_t begin = reinterpret_cast<uintptr_t>(view(i).base);
    range[i] = {begin, begin + uintptr_t(view(i).size) * (spec(i).dtype_bits / 8)};
  }
  auto isOutput = [&](int i) { return (spec(i).flags & ATTNC_TENSOR_OUTPUT) != 0; };
  for (int i : arguments) {
    const DLTensor &x = arg(i);
    if (!isOutput(i) || view(i).size == 0) // no element to write
      continue;
    int n = rank(i);
    int64_t compact[kMaxRank];
    compact[n - 1] = 1;
    for (int d = n - 2; d >= 0; --d)
      compact[d] = compact[d + 1] * x.shape[d + 1];
    if (x.strides && !injective(x.shape, x.strides, n))
      return fail(ATTNC_ERR_ALIAS,
                  cat(spec(i).name, " has shape ", formatDims(x.shape, n), " and strides ",
                      formatDims(x.strides, n),
                      ", which map different elements to one address; an output needs "
                      "distinct addresses (e.g. strides ",
                      formatDims(compact, n), ")"));
    for (int j : arguments)
      // A pair of outputs is checked once, from the later one.
      if (j != i && !(isOutput(j) && j < i) && view(j).size && range[i].overlaps(range[j]))
        return fail(ATTNC_ERR_ALIAS,
                    cat(spec(i).name, " overlaps ", spec(j).name,
                        " in memory (their address ranges intersect); outputs must not "
                        "share memory with each other or with an input, and the kernel "
                        "does not run in place"));
  }
  return ATTNC_OK;
}

/// Tensor i's int32 entries where the host reads them: its data, or a device
/// kernel's copied to the host on the call's stream (once); null with
/// `status` set where they cannot be.
const int32_t *Validator::hostEntries(int i, attnc_status &status) {
  const TensorView &v = view(i);
  if (desc.device_type == kDLCPU)
    return static_cast<const int32_t *>(v.base);
  std::vector<int32_t> &copy = hostCopies[i];
  if (copy.size() == size_t(v.size))
    return copy.data();
  std::string error;
  copy.resize(size_t(v.size));
  if (desc.device_type == kDLCUDA &&
      cudaCopyToHost(launch.deviceId, copy.data(), v.base, copy.size() * 4, stream, error))
    return copy.data();
  copy.clear();
  status = fail(ATTNC_ERR_DEVICE,
                cat("the entries of ", spec(i).name, " cannot be checked on the host before "
                    "the launch: ", error.empty() ? "its device is not CUDA" : error));
  return nullptr;
}

/// Every entry of a bound int32 tensor (lengths, a block table) within its
/// range, before any phase reads through them: the kernel trusts them.
attnc_status Validator::checkEntries(int i) {
  const TensorShape &shape = tables.tensors[i];
  const TensorView &v = view(i);
  if (!shape.numBound || !v.size)
    return ATTNC_OK;
  int64_t limit = 1;
  std::string range;
  for (int s = 0; s < shape.numBound; ++s) {
    int sym = shape.boundSymbols[s];
    if (!mulOk(limit, launch.symbols[sym], limit))
      limit = INT64_MAX;
    range += cat(s ? "*" : "", symbolName(sym));
  }
  int64_t at[kMaxRank] = {}, offset = 0;
  attnc_status status = ATTNC_OK;
  const int32_t *data = hostEntries(i, status);
  if (!data)
    return status;
  for (;;) {
    int64_t x = data[offset];
    if (x < 0 || (shape.boundInclusive ? x > limit : x >= limit)) {
      std::string index;
      for (int d = 0; d < v.rank; ++d)
        index += cat(d ? ", " : "", at[d]);
      return fail(ATTNC_ERR_INDEX,
                  cat(spec(i).name, "[", index, "] = ", x, ", but its entries must lie in [0, ",
                      range, shape.boundInclusive ? "] = [0, " : ") = [0, ", limit,
                      shape.boundInclusive ? "]" : ")", " (", spec(i).legend, ")"));
    }
    int d = v.rank - 1;
    for (; d >= 0; --d) {
      offset += v.strides[d];
      if (++at[d] < v.shape[d])
        break;
      offset -= v.strides[d] * v.shape[d];
      at[d] = 0;
    }
    if (d < 0) {
      attnc_status status = checkSteps(i);
      return status ? status : checkWithinSteps(i);
    }
  }
}

/// Entry b within step b of the offsets its bound names (checked before it):
/// the keys a sequence uses (kv_lens) lie in its span of the packed k and v.
attnc_status Validator::checkWithinSteps(int i) {
  int j = tables.tensors[i].withinSteps;
  if (j < 0)
    return ATTNC_OK;
  const TensorView &v = view(i), &cu = view(j);
  attnc_status status = ATTNC_OK;
  const int32_t *data = hostEntries(i, status);
  const int32_t *offsets = data ? hostEntries(j, status) : nullptr;
  if (!offsets)
    return status;
  for (int64_t b = 0; b < v.shape[0]; ++b) {
    int64_t x = data[b * v.strides[0]], from = offsets[b * cu.strides[0]],
            to = offsets[(b + 1) * cu.strides[0]];
    if (x > to - from)
      return fail(ATTNC_ERR_INDEX,
                  cat(spec(i).name, "[", b, "] = ", x, ", but sequence ", b, " has ", to - from,
                      " rows in ", spec(j).name, " ([", b, "] = ", from, ", [", b + 1, "] = ", to,
                      ") (", spec(i).legend, ")"));
  }
  return ATTNC_OK;
}

/// Offsets (a bound with steps, 1-d): non-decreasing, each step within its
/// symbol, which the largest step binds when no dim did (cu_seqlens_q's
/// steps are the sequences' lengths, the longest seq_q).
attnc_status Validator::checkSteps(int i) {
  int step = tables.tensors[i].stepSymbol;
  if (step < 0)
    return ATTNC_OK;
  const TensorView &v = view(i);
  attnc_status status = ATTNC_OK;
  const int32_t *data = hostEntries(i, status);
  if (!data)
    return status;
  bool binds = tables.bySteps[step];
  int64_t longest = 0, limit = binds ? INT64_MAX : launch.symbols[step];
  for (int64_t n = 1; n < v.shape[0]; ++n) {
    int64_t from = data[(n - 1) * v.strides[0]], to = data[n * v.strides[0]];
    if (to < from || to - from > limit)
      return fail(ATTNC_ERR_INDEX,
                  cat(spec(i).name, "[", n - 1, "] = ", from, " and [", n, "] = ", to,
                      to < from ? ", but offsets must not decrease"
                                : cat(", a step over ", symbolName(step), " = ", limit),
                      " (", spec(i).legend, ")"));
    longest = std::max(longest, to - from);
  }
  if (!binds)
    return ATTNC_OK;
  launch.symbols[step] = longest;
  bound[step] = true;
  return checkLimit(step);
}

/// Each scratch tensor compact in one block, at 64-byte aligned offsets
/// (Launch.cpp allocates it): its view's base holds the offset until then.
attnc_status Validator::layoutScratch() {
  int64_t bytes = 0;
  for (int i : scratch) {
    TensorView &v = view(i);
    v.rank = rank(i);
    int64_t size = 1;
    bool ok = true;
    for (int d = v.rank - 1; d >= 0; --d) {
      v.shape[d] = launch.symbols[tables.tensors[i].dims[d]];
      v.strides[d] = size;
      ok &= mulOk(size, v.shape[d], size);
    }
    int64_t tensorBytes = 0;
    if (!ok || !mulOk(size, spec(i).dtype_bits / 8, tensorBytes) || tensorBytes > kMaxScratch ||
        !addOk(bytes, (tensorBytes + 63) / 64 * 64, bytes) || bytes > kMaxScratch)
      return fail(ATTNC_ERR_LIMIT, cat("its working memory (", spec(i).name, ", ",
                                       spec(i).legend, ") would exceed ", kMaxScratch,
                                       " bytes for these shapes"));
    v.size = size;
    v.base = reinterpret_cast<void *>(intptr_t(bytes - (tensorBytes + 63) / 64 * 64));
  }
  launch.scratchBytes = uintptr_t(bytes);
  return ATTNC_OK;
}

void Validator::fillParams() {
  for (int s = 0; s < desc.num_symbols; ++s)
    if (desc.symbols[s].param >= 0)
      launch.params[desc.symbols[s].param] = launch.symbols[s];
  for (int i = 0; i < desc.num_tensors; ++i) {
    const TensorShape &shape = tables.tensors[i];
    for (int s = 0; s < shape.numStrides; ++s)
      launch.params[spec(i).stride_param + s] = view(i).strides[shape.strideDims[s]];
  }
}

attnc_status Validator::run() {
  attnc_status s;
  if ((s = checkPresence()) || (s = checkDevices()) || (s = checkDtypes()) ||
      (s = checkRanks()) || (s = checkShapes()) || (s = checkData()) || (s = checkLimits()))
    return s;
  for (int i : arguments)
    if ((s = checkStrides(i)))
      return s;
  if ((s = checkAliasing()))
    return s;
  for (int i : arguments)
    if ((s = checkEntries(i)))
      return s;
  for (int i : arguments)
    if (tables.tensors[i].afterSteps && (s = checkShape(i)))
      return s;
  if ((s = countItems()) || (s = layoutScratch()))
    return s;
  fillParams();
  return ATTNC_OK;
}

attnc_status attnc::rt::validateLaunch(const attnc_kernel_desc *desc, const DLTensor *const *args,
                                       CheckedLaunch &launch, std::string &message,
                                       void *stream) {
  if (!desc) {
    message = "attnc_rt_launch: the kernel descriptor is NULL";
    return ATTNC_ERR_ABI;
  }
  // Only abi_version is read before it matches: the rest of a descriptor
  // from another ABI, its name included, may sit at other offsets.
  if (desc->abi_version != ATTNC_ABI_VERSION) {
    message = cat("attnc_rt_launch: the kernel was built for runtime ABI version ",
                  desc->abi_version, " but this runtime implements version ", ATTNC_ABI_VERSION,
                  "; rebuild the kernel with a matching attnc");
    return ATTNC_ERR_ABI;
  }
  std::string bad = checkTables(*desc, launch.tables);
  if (!bad.empty()) {
    message = cat("kernel '", kernelName(*desc), "': malformed descriptor: ", bad);
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
  Validator validator(*desc, args, launch, stream);
  attnc_status status = validator.run();
  message = std::move(validator.message);
  return status;
}
