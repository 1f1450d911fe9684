//===- PipelineRegistration.cpp - attnc's whole pipeline in attnc-opt -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `attnc-opt --attnc-pipeline="backend=... target=... schedule=... until=..."`
// builds the pass pipeline attnc runs for that backend, target and schedule,
// through the same select() and buildPipeline() as attnc itself, so that
// attnc's MLIR stages can be replayed and bisected pass by pass; with
// `--dump-pass-pipeline` it prints that pipeline in the textual form
// `--pass-pipeline=` takes. A target or schedule attnc would refuse is the
// same error here.
//
//===----------------------------------------------------------------------===//

#include "attnc/Target/Registry.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

struct AttncPipelineOptions : public PassPipelineOptions<AttncPipelineOptions> {
  Option<std::string> backend{*this, "backend", llvm::cl::desc("mlir or halide"),
                              llvm::cl::init("mlir")};
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("an attnc target (attnc --list-targets)"),
                             llvm::cl::init("x86-64-avx512")};
  ListOption<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("tunables, name=value (attnc --list-tunables --target T)")};
  Option<std::string> until{*this, "until",
                            llvm::cl::desc("the last stage: normalized, tiled, loops or "
                                           "llvm (the LLVM dialect; on a CUDA target with "
                                           "the embedded binary)"),
                            llvm::cl::init("llvm")};
};

FailureOr<attnc::PipelineStage> stageNamed(llvm::StringRef name) {
  return llvm::StringSwitch<FailureOr<attnc::PipelineStage>>(name)
      .Case("normalized", attnc::PipelineStage::normalized)
      .Case("tiled", attnc::PipelineStage::tiled)
      .Case("loops", attnc::PipelineStage::loops)
      .Case("llvm", attnc::PipelineStage::llvmDialect)
      .Default(failure());
}

LogicalResult buildAttncPipeline(OpPassManager &pm, llvm::StringRef text,
                                 llvm::function_ref<LogicalResult(const llvm::Twine &)> fail) {
  std::unique_ptr<AttncPipelineOptions> options = AttncPipelineOptions::createFromString(text);
  if (!options)
    return fail("attnc-pipeline: cannot parse the options '" + text + "'");
  FailureOr<attnc::PipelineStage> until = stageNamed(options->until);
  if (failed(until))
    return fail("attnc-pipeline: until is one of normalized, tiled, loops, llvm; got '" +
                options->until + "'");
  std::vector<std::string> schedule(options->schedule.begin(), options->schedule.end());
  llvm::Expected<attnc::Selection> selection =
      attnc::select(options->backend, options->target, schedule);
  if (!selection)
    return fail("attnc-pipeline: " + llvm::toString(selection.takeError()));
  attnc::buildPipeline(pm, *selection, *until);
  return success();
}

} // namespace

void attnc::registerAttncPipeline() {
  registerPassPipeline(
      "attnc-pipeline",
      "attnc's pipeline for a backend, target and schedule, up to a stage (what attnc "
      "--emit runs)",
      buildAttncPipeline, [](llvm::function_ref<void(const detail::PassOptions &)> print) {
        print(AttncPipelineOptions());
      });
}
