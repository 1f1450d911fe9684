//===- DriverFuzzer.cpp - libFuzzer target: a spec through every tool entry ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The spec fuzzer stops at the lowering; this one takes each input where the
// tools take a spec after it verifies: the tuning-DB reader (attnc
// --tuning-db), attn-normalize, the header writer (attnc -o), `attnc explain`
// and the reference (`attnc-run --reference`, with q from its .npy reader),
// the tiled evaluator for an attn.flash kernel. Each spec that verifies is
// also taken to its tiled form (attnc --emit=tiled), printed, parsed again
// and sent through the same entries: every form the verifier accepts, not
// only the ones users write.
//
// An input is a spec, then optionally the sections "\n//--- npy\n" (q as a
// .npy file) and "\n//--- db\n" (a tuning DB), in any order: scripts/fuzz.sh
// seeds the corpus with the suite's specs and every --emit stage attnc
// prints for them, some with a q .npy and a tuning DB appended.
//
//===----------------------------------------------------------------------===//

#include "../../tools/attnc/Driver.h"
#include "FuzzContext.h"
#include "FuzzFiles.h"
#include "attnc/Reference/Evaluator.h"
#include "attnc/Reference/Npy.h"
#include "attnc/Target/Registry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace attnc;
using namespace mlir::attn;

namespace {

constexpr llvm::StringLiteral kTarget = "x86-64-avx2";

/// The parts of one input: the spec, q's .npy bytes, the tuning DB's text.
struct Input {
  llvm::StringRef spec;
  std::optional<llvm::StringRef> npy, db;
};

Input split(llvm::StringRef text) {
  static constexpr llvm::StringLiteral kNpy = "\n//--- npy\n", kDb = "\n//--- db\n";
  Input in;
  size_t first = std::min(text.find(kNpy), text.find(kDb));
  in.spec = text.take_front(first);
  for (llvm::StringRef rest = text.drop_front(in.spec.size()); !rest.empty();) {
    bool npy = rest.starts_with(kNpy);
    rest = rest.drop_front(npy ? kNpy.size() : kDb.size());
    size_t next = std::min(rest.find(kNpy), rest.find(kDb));
    (npy ? in.npy : in.db) = rest.take_front(next);
    rest = rest.drop_front(std::min(next, rest.size()));
  }
  return in;
}

void consume(llvm::Error err) { llvm::consumeError(std::move(err)); }

/// The backend and schedule attnc would build with: from the DB when there
/// is one (attnc --tuning-db), the default where that fails.
Selection selectionFor(mlir::ModuleOp module, const Input &in) {
  BuildRequest request{"mlir", kTarget.str(), "", false, {}};
  if (in.db)
    request.tuningDb = fuzz::writeTempFile("tuning.json", *in.db);
  llvm::Expected<BuildChoice> choice = chooseBuild(module, request);
  if (choice) {
    llvm::Expected<Selection> tuned = select(choice->backend, kTarget, choice->schedule);
    if (tuned)
      return std::move(*tuned);
    consume(tuned.takeError());
  } else {
    consume(choice.takeError());
  }
  return llvm::cantFail(select("mlir", kTarget, {}));
}

/// q from the .npy section (attnc-run --q), else seeded; k and v seeded to
/// match. None when the sizes are refused or too large to evaluate quickly.
std::optional<std::array<HostTensor, 3>> inputsFor(AttentionSpecOpInterface op,
                                                   const Input &in) {
  std::optional<ElementType> type = elementTypeOf(op.getDtype());
  if (!type)
    return std::nullopt;
  ProblemSize size{2, 19, 23};
  HostTensor q;
  if (in.npy) {
    llvm::Expected<HostTensor> read = readNpy(fuzz::writeTempFile("q.npy", *in.npy), *type);
    if (!read) {
      consume(read.takeError());
      return std::nullopt;
    }
    q = std::move(*read);
    if (q.shape.size() != 4)
      return std::nullopt;
    bool bhsd = op.getLayout() == Layout::bhsd;
    size = {q.shape[0], q.shape[bhsd ? 2 : 1], q.shape[bhsd ? 2 : 1]};
  }
  if (llvm::Error err = checkProblemSize(op, size)) {
    consume(std::move(err));
    return std::nullopt;
  }
  // Seconds, not minutes, per input: the reference is a double loop.
  if (double(size.batch) * op.getHeads() * size.seqQ * size.seqKv * op.getDim() > (1 << 22))
    return std::nullopt;
  if (!in.npy)
    q = randomTensor(*type, tensorShape(op, size, true), 1);
  return std::array<HostTensor, 3>{std::move(q),
                                   randomTensor(*type, tensorShape(op, size, false), 2),
                                   randomTensor(*type, tensorShape(op, size, false), 3)};
}

/// What attnc-run --reference does with each kernel (and the tiled
/// evaluator with an attn.flash one).
void evaluate(mlir::ModuleOp module, const Input &in) {
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    AttentionSpecOpInterface op = kernel.getSpec();
    if (!op)
      continue;
    auto tensors = inputsFor(op, in);
    if (!tensors)
      continue;
    auto &[q, k, v] = *tensors;
    if (auto result = evaluateReference(op, q, k, v); !result)
      consume(result.takeError());
    if (FlashOp flash = kernel.getFlash())
      if (auto result = evaluateFlash(flash, q, k, v); !result)
        consume(result.takeError());
  }
}

/// Every tool entry on a verified module: normalized, as attnc does first.
void throughTools(mlir::ModuleOp module, const Input &in) {
  Selection selection = selectionFor(module, in);
  mlir::PassManager pm(module->getContext());
  buildPipeline(pm, selection, PipelineStage::normalized);
  if (mlir::failed(pm.run(module)))
    return;
  writeHeader(module, "fuzz.mlir", llvm::nulls());
  for (auto [batch, seqQ, seqKv] : {std::tuple{1, 1, 1}, {2, 37, 70}, {1, 300, 129}}) {
    ExplainOptions options{selection};
    options.batch = batch;
    options.seqQ = seqQ;
    options.seqKv = seqKv;
    consume(explain(module, options, llvm::nulls()));
  }
  evaluate(module, in);
}

} // namespace

extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Input in = split(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  // Diagnostics are the expected outcome of most inputs: dropped.
  mlir::MLIRContext &ctx = fuzz::context(/*dropDiagnostics=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> module = fuzz::parseSpec(in.spec, ctx);
  if (!module)
    return 0;
  attnc::fuzz::keepFirstKernels(*module, 4);
  mlir::OwningOpRef<mlir::ModuleOp> tiled = fuzz::tiledForm(*module);
  throughTools(*module, in);
  if (tiled)
    throughTools(*tiled, in);
  return 0;
}
