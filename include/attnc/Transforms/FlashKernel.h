//===- FlashKernel.h - builds the tiled Flash form of one kernel -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TRANSFORMS_FLASHKERNEL_H
#define ATTNC_TRANSFORMS_FLASHKERNEL_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::attn {

/// Static tile sizes of the Flash form. blockQ query rows form one work item
/// (one call of the tile function); blockKv keys form one KV tile; vectors
/// are vectorWidth f32 lanes (16: AVX-512, 8: AVX2).
struct FlashConfig {
  int64_t blockQ = 64;
  int64_t blockKv = 64;
  int64_t vectorWidth = 16;
  /// Adds a global counter `<kernel>_tiles_visited` incremented once per KV
  /// tile the kernel processes (for tests of tile skipping).
  bool countTiles = false;
};

/// Query rows per work item for a head size: smaller for large heads so the
/// per-tile buffers stay small on the stack.
int64_t defaultBlockQ(int64_t headDim);

/// Builds `func.func @<kernel>_tile` (the C-interface tile function described
/// in attnc_runtime.h) for a normalized f32 attention, inserted before
/// `kernel`. Emits a diagnostic and fails for what the CPU backend cannot do.
FailureOr<func::FuncOp> buildFlashKernel(KernelOp kernel,
                                         const FlashConfig &config);

} // namespace mlir::attn

#endif // ATTNC_TRANSFORMS_FLASHKERNEL_H
