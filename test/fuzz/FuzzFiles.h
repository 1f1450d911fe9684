//===- FuzzFiles.h - files for readers that take a path ----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The .npy and tuning-DB readers take a path, as the tools give them one: a
// fuzzer writes each input into a directory of its own, made once per
// process and removed at exit.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TEST_FUZZ_FUZZFILES_H
#define ATTNC_TEST_FUZZ_FUZZFILES_H

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace attnc::fuzz {

/// This process's directory for input files (never freed: the exit handler
/// that removes it runs after static destructors would have).
inline const std::string &tempDirectory() {
  static const std::string *dir = [] {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory("attnc-fuzz", path))
      std::abort();
    auto *kept = new std::string(path);
    std::atexit([] { llvm::sys::fs::remove_directories(*dir); });
    return kept;
  }();
  return *dir;
}

/// Writes `bytes` to the file `name` in tempDirectory(); its path.
inline std::string writeTempFile(llvm::StringRef name, llvm::StringRef bytes) {
  llvm::SmallString<128> path(tempDirectory());
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    std::abort(); // the fuzzer's own directory: nothing an input can cause
  os << bytes;
  return std::string(path);
}

} // namespace attnc::fuzz

#endif // ATTNC_TEST_FUZZ_FUZZFILES_H
