//===- CpuTunables.h - the MLIR CPU backend's tunables ----------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_CPU_CPUTUNABLES_H
#define ATTNC_TARGET_CPU_CPUTUNABLES_H

#include "attnc/Target/Tunables.h"

namespace attnc {

/// The declaration of the MLIR CPU backend's schedule space.
llvm::ArrayRef<Tunable> cpuTunables();

/// `chunk`: a causal linear attention's rows per chunk, on the backends that
/// build linear attention on CPUs.
Tunable linearChunkTunable();

} // namespace attnc

#endif // ATTNC_TARGET_CPU_CPUTUNABLES_H
