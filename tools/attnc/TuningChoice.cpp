//===- TuningChoice.cpp - attnc --tuning-db: the schedule a DB picks ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include "attnc/Autotune/TuningDb.h"
#include "llvm/ADT/StringExtras.h"

using namespace attnc;
using namespace mlir::attn;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<BuildChoice> attnc::chooseBuild(mlir::ModuleOp module, const BuildRequest &r) {
  BuildChoice choice{r.backend, {}, ""};
  if (r.tuningDb.empty()) {
    choice.schedule.assign(r.schedule.begin(), r.schedule.end());
    return choice;
  }
  llvm::Expected<TuningDb> db = TuningDb::load(r.tuningDb);
  if (!db)
    return db.takeError();
  // attnc compiles one schedule per spec: every kernel's pick must agree.
  std::optional<std::pair<std::string, std::string>> picked;
  std::string pickedBy;
  for (KernelOp kernel : module.getOps<KernelOp>()) {
    TuningChoice t =
        chooseTuning(*db, kernel, r.target, r.backendExplicit ? r.backend : llvm::StringRef());
    choice.notes += "tuning: " + t.why + "\n";
    if (!t.entry)
      choice.unmatched = true;
    std::pair<std::string, std::string> mine{r.backend, ""};
    if (t.best)
      mine = {t.best->backend, t.best->schedule};
    if (picked && *picked != mine)
      return error("--tuning-db " + r.tuningDb + " picks different schedules for @" + pickedBy +
                   " and @" + kernel.getSymName() +
                   "; attnc compiles one schedule per spec: put them in separate specs");
    picked = mine;
    pickedBy = kernel.getSymName().str();
  }
  if (picked) {
    choice.backend = picked->first;
    llvm::SmallVector<llvm::StringRef> assignments;
    llvm::SplitString(picked->second, assignments, ",");
    for (llvm::StringRef a : assignments)
      choice.schedule.push_back(a.str());
  }
  // Explicit --schedule assignments come last, so they win.
  choice.schedule.insert(choice.schedule.end(), r.schedule.begin(), r.schedule.end());
  return choice;
}
