//===- ThreadPool.cpp - The runtime's process-wide worker pool ------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Workers sleep on a condition variable and wake when the job generation
// changes; the first `wanted` of them join the job. The pool only grows, and
// it is never destroyed: a static destructor would have to stop threads that
// may sit in another library's code at exit, and an idle worker costs nothing.
//
// fork(): the child inherits the pool's memory but none of its threads, so a
// launch in the child would wait forever for workers that do not exist.
// pthread_atfork handlers make fork wait for a running job, and give the child
// a fresh pool (the parent's copy is leaked on purpose: its mutexes and
// condition variables may describe threads the child does not have).
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

using namespace attnc::rt;

namespace {

/// True on pool workers, and on a caller while it runs its share of a job: a
/// job started from there (a kernel that launches a kernel) must not wait for
/// the job mutex that its own job holds.
thread_local bool tlsInTask = false;

class Pool {
public:
  unsigned run(unsigned participants, Task task, void *ctx);

  // pthread_atfork: hold both mutexes across fork so that no job is half way
  // through, then let the parent carry on.
  void lockForFork() {
    jobMutex.lock();
    stateMutex.lock();
  }
  void unlockAfterFork() {
    stateMutex.unlock();
    jobMutex.unlock();
  }

private:
  unsigned grow(unsigned count);
  void workerLoop(unsigned index, uint64_t seen);

  std::mutex jobMutex;              // held for a whole job: one job at a time
  std::mutex stateMutex;            // guards the fields below
  std::condition_variable wake;     // workers: the generation changed
  std::condition_variable done;     // the caller: running reached 0
  std::vector<std::thread> workers; // touched only with jobMutex held
  uint64_t generation = 0;          // bumped once per job that uses workers
  unsigned wanted = 0;              // workers [0, wanted) join the current job
  unsigned running = 0;             // of those, how many have not finished
  Task task = nullptr;
  void *ctx = nullptr;
};

} // namespace

void Pool::workerLoop(unsigned index, uint64_t seen) {
  tlsInTask = true;
  std::unique_lock<std::mutex> lock(stateMutex);
  for (;;) {
    wake.wait(lock, [&] { return generation != seen; });
    // A worker not wanted for a job may sleep through several generations;
    // it only ever needs to know about the current one.
    seen = generation;
    if (index >= wanted)
      continue;
    Task t = task;
    void *c = ctx;
    lock.unlock();
    t(c);
    lock.lock();
    if (--running == 0)
      done.notify_one();
  }
}

/// Grows the pool to `count` workers if it can; returns how many it has.
/// Called with jobMutex held, so `generation` cannot change underneath: a new
/// worker starts at the current generation and wakes for the next job.
unsigned Pool::grow(unsigned count) {
  try {
    workers.reserve(count);
    while (workers.size() < count)
      workers.emplace_back(&Pool::workerLoop, this,
                           static_cast<unsigned>(workers.size()), generation);
  } catch (const std::exception &) {
    // Out of threads or memory: run the job with the workers there are.
  }
  return static_cast<unsigned>(workers.size());
}

unsigned Pool::run(unsigned participants, Task t, void *c) {
  std::lock_guard<std::mutex> job(jobMutex);
  unsigned helpers = std::min(grow(participants - 1), participants - 1);
  if (helpers > 0) {
    {
      std::lock_guard<std::mutex> lock(stateMutex);
      task = t;
      ctx = c;
      wanted = helpers;
      running = helpers;
      ++generation;
    }
    wake.notify_all();
  }
  tlsInTask = true;
  t(c);
  tlsInTask = false;
  if (helpers > 0) {
    // Waiting under stateMutex also makes the workers' writes to the
    // tensors visible to the caller once this returns.
    std::unique_lock<std::mutex> lock(stateMutex);
    done.wait(lock, [&] { return running == 0; });
  }
  return helpers + 1;
}

// The pool is reached through a plain pointer so that the fork child handler
// can swap in a fresh one without running the old one's destructor.
static Pool *gPool = nullptr;

static void prepareFork() { gPool->lockForFork(); }
static void parentAfterFork() { gPool->unlockAfterFork(); }
static void childAfterFork() { gPool = new Pool; }

static Pool &pool() {
  static const bool created = [] {
    gPool = new Pool;
    pthread_atfork(prepareFork, parentAfterFork, childAfterFork);
    return true;
  }();
  (void)created;
  return *gPool;
}

unsigned attnc::rt::runOnThreads(unsigned participants, Task task, void *ctx) {
  if (participants <= 1 || tlsInTask) {
    task(ctx);
    return 1;
  }
  return pool().run(participants, task, ctx);
}

unsigned attnc::rt::defaultParticipants() {
  // hardware_concurrency() asks the kernel each time; the answer is fixed.
  static const unsigned cores =
      std::max(1u, std::thread::hardware_concurrency());
  return cores;
}
