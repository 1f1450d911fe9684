//===- HelpOptions.h - --help shows a tool's own options --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Linking libLLVM registers some 400 backend options (--x86-..., --debug-...)
// that would bury a tool's own in --help. attnc's tools put their options in
// named categories and hide the rest behind --help-hidden (not removed: they
// still work, and --help-hidden still lists them). Shared by attnc and
// attnc-run.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_HELPOPTIONS_H
#define ATTNC_TOOLS_HELPOPTIONS_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"

namespace attnc {

/// Hides every option outside `shown` from --help (keeping --help and
/// --version). Options whose name starts with `adoptPrefix` join `adoptInto`
/// first (attnc shows MLIR's pass-manager options this way).
inline void showOnlyOptionsIn(llvm::ArrayRef<llvm::cl::OptionCategory *> shown,
                              llvm::StringRef adoptPrefix = "",
                              llvm::cl::OptionCategory *adoptInto = nullptr) {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    if (adoptInto && name.starts_with(adoptPrefix))
      option->addCategory(*adoptInto);
    bool ours = llvm::any_of(option->Categories, [&](llvm::cl::OptionCategory *c) {
      return llvm::is_contained(shown, c);
    });
    if (!ours && !name.starts_with("help") && name != "version")
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

} // namespace attnc

#endif // ATTNC_TOOLS_HELPOPTIONS_H
