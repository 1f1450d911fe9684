//===- ThreadPool.cpp - The runtime's process-wide worker pool ------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Jobs from any number of calling threads run at once. A job asks for up to
// `participants - 1` helpers and waits on a list of open jobs; an idle worker
// joins the oldest job that still wants helpers. Helpers are best effort: a
// job whose helpers are busy elsewhere runs with fewer, since its task claims
// work items itself (Launch.cpp) and its caller always takes part. When the
// caller's own share returns, the job is closed (no helper joins it after
// that) and the caller waits only for the helpers that joined. The pool only
// grows, to the most helpers any one job asked for, and it is never destroyed:
// a static destructor would have to stop threads that may sit in another
// library's code at exit, and an idle worker costs nothing once asleep.
//
// A worker whose job was not a kernel's last phase (runOnThreads' nextSoon)
// polls for the next job for kSpinMicros before it sleeps on the condition
// variable: a kernel of several phases (multi-head attention: three)
// launches them back to back, and a sleeping worker costs a futex wake-up,
// tens of microseconds, per phase. After a kernel's last phase workers sleep
// at once, so they take no core from what the caller runs next (benchmarks
// time peers in turn).
//
// fork(): the child inherits the pool's memory but none of its threads, so a
// launch in the child would wait forever for workers that do not exist.
// pthread_atfork handlers make fork wait until no job is running, and give
// the child a fresh pool (the parent's copy is leaked on purpose: its mutex
// and condition variables may describe threads the child does not have).
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include "attnc/Runtime/attnc_runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>

using namespace attnc::rt;

namespace {

/// True on pool workers, and on a caller while it runs its share of a job: a
/// job started from there (a kernel that launches a kernel) runs on its
/// calling thread alone, so that a worker never waits for other workers.
thread_local bool tlsInTask = false;

constexpr auto kSpinMicros = std::chrono::microseconds(50);

/// A spin-wait hint to the core (its sibling hyperthread gets the cycles).
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// One call of runOnThreads; it lives on its caller's stack, and the caller
/// returns only when no worker refers to it any more.
struct Job {
  Task task;
  void *ctx;
  bool nextSoon;    // another job follows at once: its helpers poll for it
  unsigned slots;   // helpers it still takes; listed in Pool::open while > 0
  unsigned joined;  // helpers that joined
  unsigned running; // of those, how many have not returned
  std::condition_variable done; // running reached 0
};

class Pool {
public:
  unsigned run(unsigned participants, Task task, void *ctx, bool nextSoon);

  // pthread_atfork: wait until no job runs, and hold the mutex across fork so
  // that none starts; then let the parent carry on.
  void lockForFork() {
    std::unique_lock<std::mutex> lock(mutex);
    idle.wait(lock, [&] { return jobs == 0; });
    lock.release();
  }
  void unlockAfterFork() { mutex.unlock(); }

private:
  void grow(unsigned count);
  void workerLoop();

  std::mutex mutex;                 // guards everything below
  std::condition_variable wake;     // workers: a job was opened
  std::condition_variable idle;     // fork: `jobs` reached 0
  std::vector<std::thread> workers;
  std::deque<Job *> open;           // jobs that still take helpers, oldest first
  std::atomic<size_t> openCount{0}; // open.size(), for workers polling without the mutex
  unsigned jobs = 0;                // jobs between start and finish

  void spinForWork();
};

} // namespace

/// Polls for an open job for up to kSpinMicros (the mutex not held).
void Pool::spinForWork() {
  auto until = std::chrono::steady_clock::now() + kSpinMicros;
  while (openCount.load(std::memory_order_relaxed) == 0) {
    for (int i = 0; i < 64; ++i)
      cpuRelax();
    if (std::chrono::steady_clock::now() > until)
      return;
  }
}

void Pool::workerLoop() {
  tlsInTask = true;
  std::unique_lock<std::mutex> lock(mutex);
  bool poll = false; // the last job said another follows
  for (;;) {
    if (poll && open.empty()) {
      lock.unlock();
      spinForWork();
      lock.lock();
    }
    wake.wait(lock, [&] { return !open.empty(); });
    Job *job = open.front();
    if (--job->slots == 0)
      open.pop_front();
    openCount.store(open.size(), std::memory_order_relaxed);
    ++job->joined;
    ++job->running;
    poll = job->nextSoon;
    lock.unlock();
    job->task(job->ctx);
    lock.lock();
    // Notified under the mutex: the caller cannot see running == 0 and free
    // the job before this returns.
    if (--job->running == 0)
      job->done.notify_one();
  }
}

/// Grows the pool to `count` workers if it can. Called with the mutex held;
/// a new worker blocks on it until the caller has opened its job.
void Pool::grow(unsigned count) {
  try {
    workers.reserve(count);
    while (workers.size() < count)
      workers.emplace_back(&Pool::workerLoop, this);
  } catch (const std::exception &) {
    // Out of threads or memory: run the job with the workers there are.
  }
}

unsigned Pool::run(unsigned participants, Task t, void *c, bool nextSoon) {
  Job job{t, c, nextSoon, 0, 0, 0, {}};
  bool helped; // job.slots itself is the workers' to change once it is open
  {
    std::lock_guard<std::mutex> lock(mutex);
    grow(participants - 1);
    job.slots = std::min<unsigned>(workers.size(), participants - 1);
    ++jobs;
    helped = job.slots > 0;
    if (helped)
      open.push_back(&job);
    openCount.store(open.size(), std::memory_order_relaxed);
  }
  if (helped)
    wake.notify_all();
  tlsInTask = true;
  t(c);
  tlsInTask = false;
  // Waiting under the mutex also makes the helpers' writes to the tensors
  // visible to the caller once this returns.
  std::unique_lock<std::mutex> lock(mutex);
  if (job.slots > 0)
    open.erase(std::find(open.begin(), open.end(), &job));
  openCount.store(open.size(), std::memory_order_relaxed);
  job.done.wait(lock, [&] { return job.running == 0; });
  if (--jobs == 0)
    idle.notify_all();
  return job.joined + 1;
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

namespace {

/// The host's parallel-for (attnc_set_parallel_for), copied by each launch.
struct HostParallelFor {
  attnc_parallel_for_fn fn = nullptr;
  void *user = nullptr;
};
std::mutex gHostMutex;
HostParallelFor gHost;

HostParallelFor hostParallelFor() {
  std::lock_guard<std::mutex> lock(gHostMutex);
  return gHost;
}

struct HostCall {
  Task task;
  void *ctx;
};

/// One participant on a host thread, marked as in a task so that a kernel it
/// launches runs there alone.
void hostBody(void *closure, int32_t) {
  auto *call = static_cast<HostCall *>(closure);
  bool outer = tlsInTask;
  tlsInTask = true;
  call->task(call->ctx);
  tlsInTask = outer;
}

} // namespace

int attnc::rt::runOnThreads(unsigned participants, Task task, void *ctx, bool nextSoon) {
  if (participants <= 1 || tlsInTask) {
    task(ctx);
    return 0;
  }
  HostParallelFor host = hostParallelFor();
  if (!host.fn) {
    pool().run(participants, task, ctx, nextSoon);
    return 0;
  }
  HostCall call{task, ctx};
  if (int rc = host.fn(host.user, int32_t(participants), hostBody, &call))
    return rc;
  // Whatever no call took (a loop that ran fewer calls than asked) runs here.
  hostBody(&call, 0);
  return 0;
}

extern "C" __attribute__((visibility("default"))) void
attnc_set_parallel_for(attnc_parallel_for_fn fn, void *user) {
  std::lock_guard<std::mutex> lock(gHostMutex);
  gHost = {fn, fn ? user : nullptr};
}

unsigned attnc::rt::defaultParticipants() {
  // hardware_concurrency() asks the kernel each time; the answer is fixed.
  static const unsigned cores =
      std::max(1u, std::thread::hardware_concurrency());
  return cores;
}
