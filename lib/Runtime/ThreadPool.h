//===- ThreadPool.h - The runtime's process-wide worker pool ----*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Runtime. One pool per process, created on first use and kept
// for the life of the process, so a launch pays for a wake-up, not for thread
// creation. A job runs a task on the calling thread plus some pool workers;
// the task itself pulls work from wherever it likes (Launch.cpp uses an
// atomic counter), which keeps the pool ignorant of work items.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_THREADPOOL_H
#define ATTNC_LIB_RUNTIME_THREADPOOL_H

namespace attnc::rt {

/// A job body; every participant calls it once with the same `ctx`.
using Task = void (*)(void *ctx);

/// Runs `task(ctx)` on the calling thread and on up to `participants - 1` pool
/// workers at once, and returns when all of them have returned. Returns how
/// many threads took part: fewer than asked only when the pool could not
/// start enough threads, or when called from inside a running task (nested
/// jobs run on the calling thread alone instead of deadlocking).
///
/// Jobs from different calling threads are serialised on one mutex: the pool
/// is sized for one job at a time, and a second job would only compete for
/// the same cores.
unsigned runOnThreads(unsigned participants, Task task, void *ctx);

/// The number of participants a job gets when the user asks for "all cores":
/// std::thread::hardware_concurrency(), or 1 when that is unknown.
unsigned defaultParticipants();

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_THREADPOOL_H
