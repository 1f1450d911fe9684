//===- SharedTiles.h - one copy of a tile function per spec ------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_TARGET_SHAREDTILES_H
#define ATTNC_LIB_TARGET_SHAREDTILES_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace attnc {

/// The kernels of one spec whose tile functions are the same code (after the
/// MLIR pipeline) share the first one's, in spec order: the others are only
/// their tables and entry. Kernels may record in any order from any thread;
/// the owner chosen is the same whatever the order, so the object is too.
class SharedTiles {
public:
  explicit SharedTiles(size_t kernels) : done(kernels) {}
  /// Records kernel `index`'s tile key (tileKey; "" for none) and returns the
  /// first kernel in spec order with the same key: `index` when it is the
  /// first or has none. Waits until every earlier kernel has recorded its own.
  size_t share(size_t index, const std::string &key);

private:
  std::mutex mutex;
  std::condition_variable recorded;
  std::vector<bool> done;           // which kernels have recorded
  size_t prefix = 0;                // done[0, prefix) all are
  llvm::StringMap<size_t> firstWith; // each key's first kernel so far
};

/// At the lowered stage: a digest of `kernel`'s tile function and everything
/// it references, with the names of what the module defines left out; ""
/// when it has none.
std::string tileKey(mlir::ModuleOp module, llvm::StringRef kernel);

/// At the lowered stage: replaces the body of `kernel`'s tile function with
/// one that returns zeros, cheap to lower (useTileOf drops it afterwards);
/// false when its results have no zero.
bool stubTile(mlir::ModuleOp module, llvm::StringRef kernel);

/// At the LLVM dialect: makes `kernel` call `owner`'s tile function (in
/// another part of the same object) and drops its own with what only it
/// used. With `suffix`, the owner's is that variant's of a multi-target
/// object (writeObjectFile gives its definitions the suffix).
void useTileOf(mlir::ModuleOp module, llvm::StringRef kernel, llvm::StringRef owner,
               llvm::StringRef suffix = "");

} // namespace attnc

#endif // ATTNC_LIB_TARGET_SHAREDTILES_H
