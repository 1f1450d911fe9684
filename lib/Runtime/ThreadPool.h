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
// atomic counter), which keeps the pool ignorant of work items. A host with a
// pool of its own lends it instead (attnc_set_parallel_for).
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_THREADPOOL_H
#define ATTNC_LIB_RUNTIME_THREADPOOL_H

namespace attnc::rt {

/// A job body; every participant calls it once with the same `ctx`.
using Task = void (*)(void *ctx);

/// Runs `task(ctx)` on the calling thread and on up to `participants - 1`
/// other threads at once, and returns when all of them have returned. A task
/// claims its work itself and returns when none is left, so it must be
/// correct however many threads take part, including one.
///
/// The other threads are the host's when it set a parallel-for
/// (attnc_set_parallel_for), else pool workers. Pool workers are best effort:
/// jobs from different calling threads run at once and share the workers, so
/// a job whose workers are busy elsewhere runs with fewer. A job started from
/// inside a running task runs on its calling thread alone instead of waiting
/// for workers. Returns 0, or the host parallel-for's non-zero return (the
/// work is then partly done).
///
/// `nextSoon`: the caller launches another job right after this one (the
/// next phase of a kernel), so pool workers poll for it briefly before they
/// sleep; otherwise they sleep at once and take no core from what the caller
/// does next.
int runOnThreads(unsigned participants, Task task, void *ctx, bool nextSoon = false);

/// The number of participants a job gets when the user asks for "all cores":
/// std::thread::hardware_concurrency(), or 1 when that is unknown.
unsigned defaultParticipants();

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_THREADPOOL_H
