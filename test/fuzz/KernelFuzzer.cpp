//===- KernelFuzzer.cpp - libFuzzer target: generated specs vs the reference ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Structure-aware: the bytes choose a valid spec (every mask kind, and / or
// compositions, score_mod and mask_mod bodies, GQA, both layouts, f32 / f16 /
// bf16, lse), a schedule (block sizes, so that tiles are full, partial and
// empty at small lengths), a CPU target this machine runs and a small problem
// (lengths 0-80, seq_q 0-16 for a decode kernel, batch 0-2). The spec is
// compiled in process by the mlir backend's pipeline to an object, linked
// with the runtime into a shared object, run, and compared with the
// reference evaluator under the numeric matrix's tolerance for its dtype
// (scaled to the inputs as attnc-run does).
// A spec the verifier rejects, a failed compile or launch, or a mismatch
// prints the spec and aborts: the generator only writes valid specs, so each
// is a finding (the input is in the findings directory; ATTNC_FUZZ_DEBUG=1
// prints every spec).
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "SpecWriter.h"
#include "attnc/InitAll.h"
#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/KernelCall.h"
#include "attnc/Target/Registry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>


#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace attnc;

namespace {

/// Everything one input needs besides the spec.
struct Choice {
  std::string target;
  std::vector<std::string> schedule;
  ProblemSize size;
  uint64_t seed;
  int threads;
};

Choice choose(FuzzedDataProvider &in, bool decode) {
  Choice c;
  std::vector<std::string> targets;
  for (const TargetEntry &t : listTargets())
    if (t.backend == "mlir" && llvm::StringRef(t.device).starts_with("cpu") && t.runsHere &&
        llvm::StringRef(t.name).starts_with("x86-64"))
      targets.push_back(t.name);
  c.target = targets[in.ConsumeIntegralInRange<size_t>(0, targets.size() - 1)];
  if (in.ConsumeBool())
    c.schedule.push_back("block_q=" + std::to_string(16 * in.ConsumeIntegralInRange(1, 4)));
  if (in.ConsumeBool())
    c.schedule.push_back("block_kv=" + std::to_string(16 * in.ConsumeIntegralInRange(1, 4)));
  c.size.batch = in.ConsumeIntegralInRange(0, 8) == 0 ? 0 : in.ConsumeIntegralInRange(1, 2);
  // A decode kernel takes up to 16 query positions (its seq_q bound; past a
  // block layout's cover it refuses, as below).
  c.size.seqQ = in.ConsumeIntegralInRange(0, decode ? 16 : 80);
  c.size.seqKv = in.ConsumeIntegralInRange(0, 80);
  c.threads = in.ConsumeIntegralInRange(1, 3);
  c.seed = in.ConsumeIntegral<uint32_t>();
  return c;
}

[[noreturn]] void finding(const std::string &spec, const Choice &c, const llvm::Twine &what) {
  llvm::errs() << "attnc-kernel-fuzzer: " << what << "\n--- target " << c.target
               << ", schedule '" << llvm::join(c.schedule, " ") << "', batch " << c.size.batch
               << ", seq_q " << c.size.seqQ << ", seq_kv " << c.size.seqKv << ", threads "
               << c.threads << ", seed " << c.seed << "\n"
               << spec;
  llvm::outs().flush();
  llvm::errs().flush();
  std::abort();
}

/// A scratch directory for this process's objects, removed at exit (never
/// destroyed itself: the exit handler reads it).
const std::string &scratch() {
  static const std::string *dir = [] {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("attnc-kernel-fuzzer", path))
      std::abort();
    auto *d = new std::string(path.str());
    std::atexit([] { llvm::sys::fs::remove_directories(scratch()); });
    return d;
  }();
  return *dir;
}

/// Lowers `module` (a copy) for `selection` to a shared object in scratch().
llvm::Expected<std::string> compile(mlir::ModuleOp module, const Selection &selection) {
  mlir::PassManager pm(module->getContext());
  buildPipeline(pm, selection, PipelineStage::llvmDialect);
  if (mlir::failed(pm.run(module)))
    return llvm::createStringError("the mlir pipeline failed");
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateAndOptimize(module, selection.cpu, llvmContext);
  if (!llvmModule)
    return llvmModule.takeError();
  // Each shared object its own name: dlopen would return an open object of
  // the same name.
  static int serial = 0;
  std::string obj = scratch() + "/k.o", so = scratch() + "/k" + std::to_string(serial++) + ".so";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(obj, ec);
    if (ec)
      return llvm::createStringError("cannot write " + obj);
    if (llvm::Error err = emitMachineCode(**llvmModule, selection.cpu, false, os))
      return std::move(err);
  }
  llvm::StringRef args[] = {ATTNC_CXX_COMPILER, "-shared", "-o", so, obj, "-lm"};
  std::string message;
  if (llvm::sys::ExecuteAndWait(ATTNC_CXX_COMPILER, args, std::nullopt, {}, 0, 0, &message))
    return llvm::createStringError("linking failed: " + message);
  return so;
}

/// An empty problem (the reference takes none): as in PyTorch, no keys give
/// out = 0 and lse = -inf; no batch or no queries leave nothing to check.
void checkEmpty(const KernelTensors &tensors, const std::string &spec, const Choice &c) {
  for (double x : tensors.out->toHost().data)
    if (x != 0)
      finding(spec, c, "out is not 0 without keys");
  if (tensors.wantLse)
    for (double x : tensors.lse->toHost().data)
      if (!(std::isinf(x) && x < 0))
        finding(spec, c, "lse is not -inf without keys");
}

/// Runs the kernel and the reference on the same seeded inputs.
void runAndCompare(mlir::attn::AttentionOp op, const std::string &so, const std::string &spec,
                   const Choice &c) {
  ElementType type = *elementTypeOf(op.getDtype());
  HostTensor q = randomTensor(type, tensorShape(op, c.size, true), c.seed);
  HostTensor k = randomTensor(type, tensorShape(op, c.size, false), c.seed + 1);
  HostTensor v = randomTensor(type, tensorShape(op, c.size, false), c.seed + 2);
  llvm::Expected<LoadedKernel> kernel = loadKernel(so, "k", false);
  if (!kernel)
    finding(spec, c, llvm::toString(kernel.takeError()));
  kernel->lastError = attnc_last_error; // the runtime is this executable's
  KernelTensors tensors(op, q, k, v);
  llvm::Error err = tensors.call(*kernel, c.threads);
  dlclose(kernel->handle);
  llvm::sys::fs::remove(so);
  // Past a block layout's cover the kernel must refuse (the reference does).
  attnc::mask::LengthCover cover = attnc::mask::layoutCover(op.getMask().toMaskRule());
  if (c.size.seqQ > cover.q || c.size.seqKv > cover.kv) {
    std::string message = llvm::toString(std::move(err));
    if (message.find("but the kernel was compiled for at most") == std::string::npos)
      finding(spec, c, "lengths past the block layout: " + message);
    return;
  }
  if (err)
    finding(spec, c, llvm::toString(std::move(err)));
  if (!c.size.batch || !c.size.seqQ || !c.size.seqKv)
    return checkEmpty(tensors, spec, c);
  llvm::Expected<ReferenceResult> ref = evaluateReference(op, q, k, v);
  if (!ref)
    finding(spec, c, "the reference failed: " + llvm::toString(ref.takeError()));
  InputMagnitude m = inputMagnitude(q, k, v);
  Tolerance base = defaultTolerance(type);
  Tolerance outTol = scaledOutTolerance(base, m), lseTol = scaledLseTolerance(base, m);
  // Quiet unless they differ: then compareOutputs says where and by how much.
  auto check = [&](const char *name, const HostTensor &got, const HostTensor &want,
                   Tolerance tol) {
    if (!compareTensors(got, want, tol).ok()) {
      compareOutputs(name, got, want, tol.rtol, tol.atol);
      finding(spec, c, "the kernel does not match the reference");
    }
  };
  if (op.hasOutput(mlir::attn::OutputKind::out))
    check("out", tensors.out->toHost(), ref->out, outTol);
  if (tensors.wantLse)
    check("lse", tensors.lse->toHost(), ref->lse, lseTol);
}

} // namespace

/// As in attnc-spec-fuzzer: LLVM's allocator poisons across the instrumented
/// / uninstrumented boundary; manual poisoning off.
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  int64_t headDim;
  bool decode;
  std::string spec = fuzz::writeSpec(in, headDim, decode);
  Choice c = choose(in, decode);
  if (getenv("ATTNC_FUZZ_DEBUG"))
    llvm::errs() << spec;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(
      spec, mlir::ParserConfig(&fuzz::context(/*dropDiagnostics=*/false)));
  if (!module)
    finding(spec, c, "the generated spec does not verify");
  llvm::Expected<Selection> selection = select("mlir", c.target, c.schedule);
  if (!selection)
    finding(spec, c, llvm::toString(selection.takeError()));
  if (!scheduleMisfit(*selection, headDim).empty())
    selection = select("mlir", c.target, {});
  mlir::OwningOpRef<mlir::ModuleOp> lowered = module->clone();
  llvm::Expected<std::string> so = compile(*lowered, *selection);
  if (!so)
    finding(spec, c, llvm::toString(so.takeError()));
  runAndCompare((*module->getOps<mlir::attn::KernelOp>().begin()).getAttention(), *so, spec,
                c);
  return 0;
}
