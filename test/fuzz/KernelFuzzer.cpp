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
// (lengths 0-80, batch 0-2). The spec is compiled in process by the mlir
// backend's pipeline to an object, linked with the runtime into a shared
// object, run, and compared with the reference evaluator under the numeric
// matrix's tolerance for its dtype (scaled to the inputs as attnc-run does).
// A spec the verifier rejects, a failed compile or launch, or a mismatch
// prints the spec and aborts: the generator only writes valid specs, so each
// is a finding (the input is in the findings directory; ATTNC_FUZZ_DEBUG=1
// prints every spec).
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
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
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <dlfcn.h>


#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace attnc;

namespace {

/// Writes one valid spec from the fuzzer's bytes.
class SpecWriter {
public:
  explicit SpecWriter(FuzzedDataProvider &in) : in(in) {}

  std::string spec(int64_t &headDim) {
    int64_t kvHeads = in.ConsumeIntegralInRange<int64_t>(1, 3);
    int64_t heads = kvHeads * in.ConsumeIntegralInRange<int64_t>(1, 3);
    headDim = in.ConsumeIntegralInRange<int64_t>(1, 80);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "attn.kernel @k {\n  attn.attention {num_heads = " << heads
       << ", num_kv_heads = " << kvHeads << ", head_dim = " << headDim
       << ", dtype = " << pick({"f32", "f16", "bf16"})
       << ", layout = " << pick({"bhsd", "bshd"}) << ", mask = " << mask(2);
    if (in.ConsumeIntegralInRange(0, 3) == 0)
      os << ", scale = " << llvm::formatv("{0:f3}", in.ConsumeFloatingPointInRange(0.01, 1.0));
    os << ", outputs = " << pick({"[out]", "[out, lse]", "[lse, out]"}) << "}\n";
    os << scoreMod() << maskMod() << "}\n";
    return text;
  }

private:
  std::string pick(std::initializer_list<const char *> choices) {
    return *(choices.begin() + in.ConsumeIntegralInRange<size_t>(0, choices.size() - 1));
  }
  int64_t small(int64_t hi) { return in.ConsumeIntegralInRange<int64_t>(0, hi); }
  std::string bound(int64_t hi) {
    return in.ConsumeIntegralInRange(0, 4) == 0 ? "inf" : std::to_string(small(hi));
  }

  std::string mask(int depth) {
    switch (in.ConsumeIntegralInRange(0, depth > 0 ? 7 : 5)) {
    case 0:
      return "#attn.full";
    case 1:
      return "#attn.causal<" + pick({"top_left", "bottom_right"}) + ">";
    case 2:
      return "#attn.sliding_window<left = " + bound(40) + ", right = " + bound(40) +
             pick({"", ", align = bottom_right"}) + ">";
    case 3:
      return blockSparse();
    case 4:
      return llvm::formatv("#attn.longformer<block = {0}, window = {1}, global = [{2}]>",
                           1 + small(24), small(2), small(3));
    case 5:
      return llvm::formatv(
          "#attn.bigbird<block = {0}, window = {1}, global = {2}, random = {3}, seed = {4}>",
          1 + small(24), small(2), small(2), small(3), in.ConsumeIntegral<uint32_t>());
    default: {
      std::string parts = mask(depth - 1) + ", " + mask(depth - 1);
      if (in.ConsumeBool())
        parts += ", " + mask(depth - 1);
      return "#attn." + pick({"and", "or"}) + "<[" + parts + "]>";
    }
    }
  }

  std::string blockSparse() {
    int64_t rows = 1 + small(4), cols = 1 + small(4);
    std::string layout;
    for (int64_t r = 0; r < rows; ++r) {
      layout += r ? ", [" : "[";
      for (int64_t c = 0; c < cols; ++c)
        layout += std::string(c ? ", " : "") + (in.ConsumeBool() ? "1" : "0");
      layout += "]";
    }
    return llvm::formatv("#attn.block_sparse<block = [{0}, {1}], layout = [{2}]>",
                         1 + small(24), 1 + small(24), layout);
  }

  std::string scoreMod() {
    static const char *head = "    score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, "
                              "%q: index, %kv: index):\n";
    switch (in.ConsumeIntegralInRange(0, 3)) {
    case 1: // soft-capping
      return std::string(head) +
             llvm::formatv("      %cap = arith.constant {0:f1} : f32\n", 1.0 + small(40)).str() +
             "      %x = arith.divf %s, %cap : f32\n      %t = math.tanh %x : f32\n"
             "      %r = arith.mulf %t, %cap : f32\n      attn.yield %r : f32\n    }\n";
    case 2: // ALiBi-like: a per-head slope times (kv - q)
      return std::string(head) +
             "      %c1 = arith.constant 1 : index\n      %h1 = arith.addi %h, %c1 : index\n"
             "      %hi = arith.index_cast %h1 : index to i64\n"
             "      %hf = arith.sitofp %hi : i64 to f32\n"
             "      %m = arith.constant -0.5 : f32\n      %e = arith.mulf %hf, %m : f32\n"
             "      %slope = math.exp2 %e : f32\n"
             "      %qi = arith.index_cast %q : index to i64\n"
             "      %ki = arith.index_cast %kv : index to i64\n"
             "      %d = arith.subi %ki, %qi : i64\n      %df = arith.sitofp %d : i64 to f32\n"
             "      %bias = arith.mulf %slope, %df : f32\n"
             "      %r = arith.addf %s, %bias : f32\n      attn.yield %r : f32\n    }\n";
    case 3: // a batch-dependent bias
      return std::string(head) + "      %bi = arith.index_cast %b : index to i64\n"
                                 "      %bf = arith.sitofp %bi : i64 to f32\n"
                                 "      %r = arith.subf %s, %bf : f32\n      attn.yield %r : f32\n"
                                 "    }\n";
    default:
      return "";
    }
  }

  std::string maskMod() {
    static const char *head =
        "    mask_mod {\n    ^bb0(%b: index, %h: index, %q: index, %kv: index):\n";
    switch (in.ConsumeIntegralInRange(0, 2)) {
    case 1: // documents of a fixed length
      return std::string(head) +
             llvm::formatv("      %len = arith.constant {0} : index\n", 1 + small(30)).str() +
             "      %dq = arith.divui %q, %len : index\n      %dk = arith.divui %kv, %len : index\n"
             "      %keep = arith.cmpi eq, %dq, %dk : index\n      attn.yield %keep : i1\n    }\n";
    case 2: // every other key for odd heads
      return std::string(head) +
             "      %c2 = arith.constant 2 : index\n      %hk = arith.addi %h, %kv : index\n"
             "      %r = arith.remui %hk, %c2 : index\n      %c0 = arith.constant 0 : index\n"
             "      %keep = arith.cmpi eq, %r, %c0 : index\n      attn.yield %keep : i1\n    }\n";
    default:
      return "";
    }
  }

  FuzzedDataProvider &in;
};

/// Everything one input needs besides the spec.
struct Choice {
  std::string target;
  std::vector<std::string> schedule;
  ProblemSize size;
  uint64_t seed;
  int threads;
};

Choice choose(FuzzedDataProvider &in) {
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
  c.size.seqQ = in.ConsumeIntegralInRange(0, 80);
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
  std::string spec = SpecWriter(in).spec(headDim);
  Choice c = choose(in);
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
