//===- KernelCall.cpp - calling a compiled kernel as a user would ---------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/KernelCall.h"

#include "attnc/Reference/KvCache.h"
#include "attnc/Reference/Varlen.h"
#include "attnc/Runtime/ElementCodec.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdlib>
#include <new>

using namespace attnc;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

DLDataType attnc::dlpackDtype(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return {kDLFloat, 32, 1};
  case ElementType::f16:
    return {kDLFloat, 16, 1};
  case ElementType::bf16:
    return {kDLBfloat, 16, 1};
  case ElementType::i32:
    return {kDLInt, 32, 1};
  }
  llvm_unreachable("unknown element type");
}

namespace {
constexpr size_t kHugePage = size_t(2) << 20;
} // namespace

template <> char *attnc::TensorAllocator<char>::allocate(size_t n) {
  if (n < kHugePage)
    return static_cast<char *>(::operator new(n));
  size_t bytes = (n + kHugePage - 1) / kHugePage * kHugePage;
  void *p = std::aligned_alloc(kHugePage, bytes);
  if (!p)
    throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE); // advice: no huge pages is no error
  return static_cast<char *>(p);
}

template <> void attnc::TensorAllocator<char>::deallocate(char *p, size_t n) {
  if (n < kHugePage)
    ::operator delete(p);
  else
    std::free(p);
}

DeviceTensor::DeviceTensor(ElementType type, llvm::ArrayRef<int64_t> dims)
    : type(type), shape(dims.begin(), dims.end()) {
  dl.dtype = dlpackDtype(type);
  data.assign(numElements() * elementBytes(dl.dtype), 0);
  dl.data = data.data();
  dl.device = {kDLCPU, 0};
  dl.ndim = shape.size();
  dl.shape = shape.data();
}

std::unique_ptr<DeviceTensor> DeviceTensor::from(ElementType type, const HostTensor &t) {
  auto d = std::make_unique<DeviceTensor>(type, t.shape);
  auto *ints = reinterpret_cast<int32_t *>(d->data.data());
  for (int64_t i = 0, e = d->numElements(); i < e; ++i) {
    if (type == ElementType::i32) // ElementCodec holds the float types only
      ints[i] = int32_t(roundTo(type, t.data[i]));
    else
      storeElement(d->dl.dtype, d->data.data(), i, static_cast<float>(roundTo(type, t.data[i])));
  }
  return d;
}

HostTensor DeviceTensor::toHost() const {
  HostTensor t(type, shape);
  auto *ints = reinterpret_cast<const int32_t *>(data.data());
  for (int64_t i = 0, e = numElements(); i < e; ++i)
    t.data[i] = type == ElementType::i32 ? ints[i] : loadElement(dl.dtype, data.data(), i);
  return t;
}

int64_t DeviceTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Expected<LoadedKernel> attnc::loadKernel(llvm::StringRef soPath, llvm::StringRef name,
                                               bool global) {
  std::string path = soPath.str();
  LoadedKernel kernel;
  kernel.handle = dlopen(path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!kernel.handle)
    return error("cannot load " + soPath + ": " + dlerror());
  kernel.entry = reinterpret_cast<KernelEntryFn>(dlsym(kernel.handle, name.str().c_str()));
  if (!kernel.entry)
    return error(soPath + " has no kernel '" + name + "'");
  kernel.lastError =
      reinterpret_cast<const char *(*)()>(dlsym(kernel.handle, "attnc_last_error"));
  auto describe = reinterpret_cast<attnc_describe_fn>(
      dlsym(kernel.handle, (ATTNC_DESCRIBE_PREFIX + name).str().c_str()));
  kernel.desc = describe ? describe() : nullptr;
  kernel.run = reinterpret_cast<decltype(kernel.run)>(dlsym(kernel.handle, "attnc_rt_run"));
  return kernel;
}

llvm::Expected<LoadedKernel> attnc::loadTableKernel(llvm::StringRef soPath,
                                                    llvm::StringRef name) {
  llvm::Expected<LoadedKernel> kernel = loadKernel(soPath, name, /*global=*/false);
  if (kernel && (!kernel->desc || !kernel->run))
    return error("the kernel object lacks attnc_describe_" + name + " or attnc_rt_run");
  return kernel;
}

IndexTensor::IndexTensor(std::vector<int32_t> values, std::vector<int64_t> dims)
    : data(std::move(values)), shape(std::move(dims)) {
  dl.data = data.data();
  dl.device = {kDLCPU, 0};
  dl.ndim = int32_t(shape.size());
  dl.dtype = {kDLInt, 32, 1};
  dl.shape = shape.data();
}

/// q, k, v and out packed, lse [heads, total_q], and the offsets.
void KernelTensors::packVarlen(AttentionSpecOpInterface op, ElementType type,
                               const HostTensor &hq, const HostTensor &hk,
                               const HostTensor &hv) {
  seqQ = hq.shape[1];
  q = DeviceTensor::from(type, packSequences(hq, varlen->qLens));
  k = DeviceTensor::from(type, packSequences(hk, varlen->kvLens));
  v = DeviceTensor::from(type, packSequences(hv, varlen->kvLens));
  auto offsets = [](llvm::ArrayRef<int32_t> lens) {
    std::vector<int32_t> cu = Varlen::offsets(lens);
    int64_t n = int64_t(cu.size());
    return std::make_unique<IndexTensor>(std::move(cu), std::vector<int64_t>{n});
  };
  cuQ = offsets(varlen->qLens);
  cuKv = offsets(varlen->kvLens);
  if (!varlen->kvUsed.empty())
    kvLens = std::make_unique<IndexTensor>(varlen->kvUsed,
                                           std::vector<int64_t>{int64_t(varlen->kvUsed.size())});
  out = std::make_unique<DeviceTensor>(type, q->shape);
  lse = std::make_unique<DeviceTensor>(ElementType::f32,
                                       llvm::ArrayRef<int64_t>{op.getHeads(), q->shape[0]});
  wantLse = op.hasOutput(OutputKind::lse);
}

KernelTensors::KernelTensors(AttentionSpecOpInterface op, const HostTensor &hq, const HostTensor &hk,
                             const HostTensor &hv, const KvCache *cache, const Varlen *packed,
                             const ModInputs *inputs)
    : varlen(packed && packed->active() ? packed : nullptr) {
  ElementType type = *elementTypeOf(op.getDtype());
  if (mlir::ArrayAttr decls = op.getInputsAttr(); decls && inputs)
    for (auto decl : decls.getAsRange<ModInputAttr>()) {
      const HostTensor &t = inputs->find(decl.getName().getValue())->second;
      modInputs.push_back(DeviceTensor::from(t.type, t));
    }
  if (varlen) {
    packVarlen(op, type, hq, hk, hv);
    return;
  }
  q = DeviceTensor::from(type, hq);
  bool paged = cache && cache->pageSize > 0;
  k = DeviceTensor::from(type, paged ? toPages(op, hk, *cache) : hk);
  v = DeviceTensor::from(type, paged ? toPages(op, hv, *cache) : hv);
  if (cache && cache->pageSize >= 0)
    kvLens = std::make_unique<IndexTensor>(cache->lens,
                                           std::vector<int64_t>{int64_t(cache->lens.size())});
  if (paged)
    blockTable = std::make_unique<IndexTensor>(
        cache->table, std::vector<int64_t>{hq.shape[0], cache->maxPages});
  out = std::make_unique<DeviceTensor>(type, hq.shape);
  bool bhsd = op.getLayout() == Layout::bhsd;
  // lse is float32 for every kernel (the runtime checks it).
  lse = std::make_unique<DeviceTensor>(
      ElementType::f32,
      llvm::ArrayRef<int64_t>{hq.shape[0], op.getHeads(), hq.shape[bhsd ? 2 : 1]});
  wantLse = op.hasOutput(OutputKind::lse);
  // [batch, heads, seq_q, seq_kv] whatever the layout, in the kernel's dtype.
  if (op.hasOutput(OutputKind::weights))
    weights = std::make_unique<DeviceTensor>(
        type, llvm::ArrayRef<int64_t>{hq.shape[0], op.getHeads(), hq.shape[bhsd ? 2 : 1],
                                      hk.shape[bhsd ? 2 : 1]});
}

llvm::Error KernelTensors::call(const LoadedKernel &kernel, int threads) {
  attnc_options options{threads};
  DLTensor *lseArg = wantLse ? &lse->dl : nullptr;
  int status;
  if (!modInputs.empty()) {
    if (!kernel.desc || !kernel.run)
      return error("the kernel object lacks attnc_describe_<kernel> or attnc_rt_run, which "
                   "a call with mod inputs goes through");
    // Inputs follow every other argument (KernelInterface.h).
    std::vector<const DLTensor *> args = {&q->dl, &k->dl, &v->dl, &out->dl, lseArg};
    if (weights)
      args.push_back(&weights->dl);
    for (const auto &t : {cuQ.get(), cuKv.get(), kvLens.get(), blockTable.get()})
      if (t)
        args.push_back(&t->dl);
    for (const auto &t : modInputs)
      args.push_back(&t->dl);
    status = kernel.run(kernel.desc, args.data(), &options);
  } else if (cuQ && kvLens)
    status = reinterpret_cast<VarlenLensEntryFn>(kernel.entry)(
        &q->dl, &k->dl, &v->dl, &out->dl, lseArg, &cuQ->dl, &cuKv->dl, &kvLens->dl, &options);
  else if (cuQ)
    status = reinterpret_cast<PagedEntryFn>(kernel.entry)(
        &q->dl, &k->dl, &v->dl, &out->dl, lseArg, &cuQ->dl, &cuKv->dl, &options);
  else if (blockTable)
    status = reinterpret_cast<PagedEntryFn>(kernel.entry)(
        &q->dl, &k->dl, &v->dl, &out->dl, lseArg, &kvLens->dl, &blockTable->dl, &options);
  else if (kvLens)
    status = reinterpret_cast<LensEntryFn>(kernel.entry)(&q->dl, &k->dl, &v->dl, &out->dl,
                                                         lseArg, &kvLens->dl, &options);
  else if (weights)
    status = reinterpret_cast<WeightsEntryFn>(kernel.entry)(
        &q->dl, &k->dl, &v->dl, &out->dl, lseArg, &weights->dl, &options);
  else
    status = kernel.entry(&q->dl, &k->dl, &v->dl, &out->dl, lseArg, &options);
  if (status == ATTNC_OK)
    return llvm::Error::success();
  return error("kernel returned " + llvm::Twine(status) + ": " +
               (kernel.lastError ? kernel.lastError() : "(no attnc_last_error)"));
}

HostTensor KernelTensors::outToHost() const {
  HostTensor t = out->toHost();
  return varlen ? unpackSequences(t, varlen->qLens, seqQ) : t;
}

HostTensor KernelTensors::lseToHost() const {
  HostTensor t = lse->toHost();
  return varlen ? unpackLse(t, varlen->qLens, seqQ) : t;
}

double KernelTensors::megabytes() const {
  return q->megabytes() + k->megabytes() + v->megabytes() + out->megabytes() +
         (wantLse ? lse->megabytes() : 0) + (weights ? weights->megabytes() : 0);
}

double attnc::relativeTolerance(ElementType type) {
  return type == ElementType::f32 ? 1e-4 : type == ElementType::f16 ? 4e-3 : 2e-2;
}

Tolerance attnc::defaultTolerance(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return {2e-5, 2e-6};
  case ElementType::f16:
    return {4e-3, 1e-3};
  case ElementType::bf16:
  case ElementType::i32: // no kernel outputs i32
    return {2e-2, 8e-3};
  }
  llvm_unreachable("unknown element type");
}

static double maxAbs(const HostTensor &t) {
  double m = 0;
  for (double x : t.data)
    if (std::isfinite(x))
      m = std::max(m, std::fabs(x));
  return m;
}

InputMagnitude attnc::inputMagnitude(const HostTensor &q, const HostTensor &k,
                                     const HostTensor &v) {
  // scale * head_dim cancels between the bound and its unit-input value.
  return {std::max(1.0, maxAbs(v)), std::max(1.0, maxAbs(q) * maxAbs(k))};
}

Tolerance attnc::scaledOutTolerance(Tolerance base, InputMagnitude m) {
  return {base.rtol, base.atol * m.values * m.scores};
}

Tolerance attnc::scaledLseTolerance(Tolerance base, InputMagnitude m) {
  return {base.rtol, base.atol * m.scores};
}

Comparison attnc::compareTensors(const HostTensor &got, const HostTensor &ref, Tolerance tol) {
  Comparison c;
  for (int64_t i = 0, e = ref.numElements(); i < e; ++i) {
    double g = got.data[i], r = ref.data[i];
    if (std::isnan(g) && std::isnan(r))
      continue; // NaN where the reference has NaN (a NaN input reaching the row)
    if (std::isinf(r) || std::isinf(g)) {
      bool same = std::isinf(r) && std::isinf(g) && (r < 0) == (g < 0);
      if (!same && c.worst < 0)
        c.worst = i;
      c.bad += !same;
      continue;
    }
    double err = std::fabs(g - r);
    if (!(err <= tol.atol + tol.rtol * std::fabs(r))) { // also catches a NaN on one side
      ++c.bad;
      // A non-finite difference is the worst there is: it stays once found.
      if (c.worst < 0 || err > std::fabs(got.data[c.worst] - ref.data[c.worst]))
        c.worst = i;
    }
    c.maxAbs = std::max(c.maxAbs, err);
    if (r != 0)
      c.maxRel = std::max(c.maxRel, err / std::fabs(r));
  }
  return c;
}

bool attnc::compareOutputs(llvm::StringRef name, const HostTensor &got, const HostTensor &ref,
                           double rtol, double atol) {
  Comparison c = compareTensors(got, ref, {rtol, atol});
  llvm::outs() << llvm::formatv("{0}: max abs err {1:e2}, max rel err {2:e2} "
                                "(rtol {3:e1}, atol {4:e1}): {5}\n",
                                name, c.maxAbs, c.maxRel, rtol, atol,
                                c.ok() ? "ok" : "MISMATCH");
  if (!c.ok())
    llvm::outs() << llvm::formatv("  {0} elements off; worst at flat index {1}: got "
                                  "{2:e6}, want {3:e6}\n",
                                  c.bad, c.worst, c.worst >= 0 ? got.data[c.worst] : 0.0,
                                  c.worst >= 0 ? ref.data[c.worst] : 0.0);
  return c.ok();
}
