//===- KernelCache.h - attnc's content-addressed kernel cache ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Like ccache, for kernels: the file an `attnc SPEC --emit=obj|so|ptx -o F`
// writes is kept in a cache directory under a key that names everything the
// file depends on (the compiler's build id, the command line, the contents of
// the files it names), so the same invocation with the same compiler copies it
// instead of compiling again. Enabled by --kernel-cache=DIR or
// ATTNC_KERNEL_CACHE=DIR.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_KERNELCACHE_H
#define ATTNC_TOOLS_ATTNC_KERNELCACHE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace attnc {

/// The build id of this attnc (cmake/AttncBuildId.cmake): 64 hex digits.
llvm::StringRef kernelCacheBuildId();

/// A file a compile reads that its command line does not name.
struct KernelCacheInput {
  std::string what; // what it is, for the key
  std::string path; // "" : none
};

/// The cache key (64 hex digits) of an invocation with `args` (argv without
/// argv[0]) that reads `inputs` too; an error where the command line cannot be
/// keyed safely or a file it names cannot be read.
llvm::Expected<std::string> kernelCacheKey(llvm::ArrayRef<std::string> args,
                                           llvm::ArrayRef<KernelCacheInput> inputs = {});

class KernelCache {
public:
  /// Off.
  KernelCache() = default;
  /// The cache in `dir` ("" : off) for the invocation with `args` (argv
  /// without argv[0]); `verbose` prints a line per invocation on stderr.
  KernelCache(std::string dir, llvm::ArrayRef<const char *> args, bool verbose);

  bool enabled() const { return !dir.empty(); }
  llvm::StringRef directory() const { return dir; }

  /// Keys the output by the contents of `path` too ("" : there is none), a
  /// file the compile reads that is not on the command line: the Halide
  /// runtime object found next to attnc, which decides what the object holds.
  void addInput(llvm::StringRef what, llvm::StringRef path);

  /// Writes the output file `path` (an object, shared object or PTX: `ext`
  /// is o, so or ptx): a copy of the cached entry on a hit, else `compile`'s,
  /// which is then stored when it succeeded without printing anything. A cache
  /// that cannot be read or written only costs the compile: the error
  /// returned is always `compile`'s.
  llvm::Error produce(llvm::StringRef path, llvm::StringRef ext,
                      llvm::function_ref<llvm::Error()> compile);

  /// At the end of an invocation that wrote no cached output (a text stage,
  /// explain, a spec that did not parse): says so in verbose mode.
  void finish();

private:
  void note(const llvm::Twine &line);
  llvm::Error compileAndStore(llvm::StringRef path, llvm::StringRef entry,
                              llvm::function_ref<llvm::Error()> compile);

  std::string dir;
  std::vector<std::string> args;
  std::vector<KernelCacheInput> inputs;
  std::string key;
  bool verbose = false;
  bool noted = false;
};

} // namespace attnc

#endif // ATTNC_TOOLS_ATTNC_KERNELCACHE_H
