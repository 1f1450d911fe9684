//===- attnc-tune.cpp - search schedules, check each, write a tuning DB ---===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   attnc-tune SPEC --db DB [--budget S | --trials N] [--seq-q N ...]
//   attnc-tune merge A B ... -o C
//
// One kernel of SPEC is tuned: an attention spec, or a linear attention
// (Problem.h). The search space is the backends' declared tunables of its
// family (Space.h). Small spaces are searched exhaustively; larger ones by a
// guided search: each backend's default (and its variants in each enumerated
// tunable: the Halide autoschedulers), a few random points, then best-first
// local refinement (the untried one-step neighbours of the fastest correct
// candidate that has any), with a random restart when none has. Candidates
// that cannot fit the target's registers or cache are pruned before compiling (Registry.h:
// scheduleMisfit). Every candidate tried is written to the DB at once, so an
// interrupted search resumes where it stopped; `--shard i/n` takes the
// candidates whose hash falls in shard i, so n machines split one search and
// `merge` joins their DBs.
//
//===----------------------------------------------------------------------===//

#include "Measure.h"
#include "Report.h"
#include "Space.h"

#include "attnc/Autotune/TuningDb.h"
#include "attnc/Target/Registry.h"
#include "attnc/Tools/HelpOptions.h"
#include "attnc/Tools/SpecFile.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <numeric>
#include <set>

using namespace attnc;
using namespace attnc::tune;
using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory searchCat("attnc-tune: the search");
cl::OptionCategory problemCat("attnc-tune: the problem candidates are timed on");
cl::SubCommand mergeCmd("merge", "Merge tuning DBs (shards of one search, or several)");

cl::opt<std::string> specFile(cl::Positional, cl::desc("SPEC"), cl::cat(searchCat));
cl::opt<std::string> dbFile("db", cl::desc("Tuning DB to write (resumed when it exists)"),
                            cl::value_desc("DB"), cl::cat(searchCat));
cl::opt<std::string> targetName("target", cl::desc("attnc target to tune for (one this machine runs)"),
                                cl::init(attnc::kDefaultTarget), cl::cat(searchCat));
cl::list<std::string> backendNames("backends", cl::desc("Backends to search (default mlir,halide)"),
                                   cl::CommaSeparated, cl::cat(searchCat));
cl::list<std::string> spaceArgs("space",
                                cl::desc("Narrow a tunable to the values listed: name=v1|v2|..."),
                                cl::value_desc("NAME=V|V"), cl::cat(searchCat));
enum class Search { automatic, exhaustive, guided };
cl::opt<Search> searchKind(
    "search", cl::desc("Search strategy"), cl::init(Search::automatic),
    cl::values(clEnumValN(Search::automatic, "auto", "exhaustive up to 64 points, else guided"),
               clEnumValN(Search::exhaustive, "exhaustive", "every point of the space"),
               clEnumValN(Search::guided, "guided", "random start, then local refinement")),
    cl::cat(searchCat));
cl::opt<double> budget("budget", cl::desc("Stop after this many seconds (default 300 "
                                          "without --trials)"),
                       cl::cat(searchCat));
cl::opt<unsigned> trials("trials", cl::desc("Stop when the DB entry holds this many candidates "
                                           "(0, the default: no such limit)"),
                         cl::cat(searchCat));
cl::opt<std::string> shardArg("shard", cl::desc("Take shard i of n of the space: i/n"),
                              cl::value_desc("i/n"), cl::cat(searchCat));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the search and of the inputs"), cl::init(1),
                       cl::cat(searchCat));
cl::opt<std::string> reportDir("report", cl::desc("Write report.md and candidates.svg here"),
                               cl::value_desc("DIR"), cl::cat(searchCat));
cl::opt<std::string> workDir("work-dir", cl::desc("Keep candidates' objects and logs here "
                                                  "(default: a temporary directory, removed)"),
                             cl::cat(searchCat));
cl::opt<std::string> attncPath("attnc", cl::desc("Build candidates with this attnc executable "
                                                 "(default: in process, attnc's library)"),
                               cl::cat(searchCat));
cl::opt<double> timeout("candidate-timeout",
                        cl::desc("Seconds a candidate's check and timing may take"),
                        cl::init(120), cl::cat(searchCat));
// Test hook: the N-th candidate compiled is built from the spec with its scale
// changed, so the check must reject it.
cl::opt<unsigned> injectFault("inject-fault", cl::desc("Test: miscompile the N-th candidate"),
                              cl::Hidden, cl::cat(searchCat));

cl::opt<std::string> kernelName("kernel", cl::desc("Kernel to tune when SPEC holds several"),
                                cl::cat(problemCat));
cl::opt<int64_t> batch("batch", cl::desc("Batch size"), cl::init(1), cl::cat(problemCat));
cl::opt<int64_t> seqQ("seq-q", cl::desc("Query length"), cl::init(2048), cl::cat(problemCat));
cl::opt<int64_t> seqKv("seq-kv", cl::desc("Key/value length (default: seq-q)"),
                       cl::cat(problemCat));
cl::opt<int> threads("num-threads", cl::desc("Threads (0 = all cores)"), cl::init(0),
                     cl::cat(problemCat));
cl::opt<int> rounds("rounds", cl::desc("Interleaved timing rounds per candidate"), cl::init(5),
                    cl::cat(problemCat));
cl::opt<unsigned> confirmCount("confirm",
                                cl::desc("Re-time the best over --confirm-rounds until it is "
                                         "a confirmed one, at most this many times (the best "
                                         "of many short measurements is biased towards luck)"),
                                cl::init(5), cl::cat(problemCat));
cl::opt<int> confirmRounds("confirm-rounds", cl::desc("Rounds of the confirming re-timing"),
                           cl::init(15), cl::cat(problemCat));
cl::opt<int64_t> checkSeq("check-seq",
                          cl::desc("Sequence length of the check against the reference"),
                          cl::init(257), cl::cat(problemCat));

cl::list<std::string> mergeInputs(cl::Positional, cl::desc("DB..."), cl::OneOrMore,
                                  cl::sub(mergeCmd));
cl::opt<std::string> mergeOutput("o", cl::desc("Merged DB"), cl::Required, cl::sub(mergeCmd));

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string clock(double seconds) {
  int s = int(seconds + 0.5);
  return llvm::formatv("{0}:{1}{2}", s / 60, s % 60 < 10 ? "0" : "", s % 60);
}

} // namespace

namespace {

/// One search: the DB entry it fills, the space, and how candidates are built
/// and measured.
class Tuner {
public:
  Tuner(TuningDb &db, TuningEntry &entry, const SearchSpace &space, const Compiler &compiler,
        const Problem &problem, int64_t headDim)
      : db(db), entry(entry), space(space), compiler(compiler), problem(problem),
        headDim(headDim), rng(seed) {}

  llvm::Error run(const std::string &defaultSo);
  /// Re-times the best over --confirm-rounds until it is a confirmed one.
  llvm::Error confirm();
  SearchCounts counts;

private:
  /// The next point to try, or none when the space is exhausted.
  std::optional<Point> next();
  /// The verdict on a compiled candidate: measured, or copied from the
  /// candidate (or the default) that compiled to the same kernel.
  TuningCandidate judge(const std::string &so);
  /// Tries `p` unless seen, out of shard or pruned; true when it counted.
  llvm::Expected<bool> consider(const Point &p);
  bool done() const;
  void progress(const TuningCandidate &c);

  TuningDb &db;
  TuningEntry &entry;
  const SearchSpace &space;
  const Compiler &compiler;
  const Problem &problem;
  int64_t headDim;
  std::mt19937_64 rng;
  std::string defaultSo, defaultObject;
  int shard = 0, shards = 1;
  bool exhaustive = false;
  std::deque<Point> queue;
  std::set<std::string> seen;
  std::vector<std::pair<Point, double>> measured; // correct points and speedups
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  unsigned compiled = 0;

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

/// Seconds the search may take; 0 for no limit (--trials alone).
double timeLimit() {
  return budget.getNumOccurrences() ? double(budget) : (trials ? 0 : 300);
}

bool Tuner::done() const {
  if (trials && entry.candidates.size() >= trials)
    return true;
  return timeLimit() > 0 && elapsed() >= timeLimit();
}

std::optional<Point> Tuner::next() {
  for (int attempts = 0; attempts < 100000; ++attempts) {
    if (!queue.empty()) {
      Point p = queue.front();
      queue.pop_front();
      return p;
    }
    if (exhaustive)
      return std::nullopt;
    // Best-first local refinement: the unseen neighbours of the fastest
    // correct point that still has some; a random restart when none has.
    // Fastest first, ties in the order measured (as Report.cpp's table).
    std::vector<size_t> byspeed(measured.size());
    std::iota(byspeed.begin(), byspeed.end(), 0);
    llvm::sort(byspeed, [&](size_t a, size_t b) {
      return std::make_pair(-measured[a].second, a) < std::make_pair(-measured[b].second, b);
    });
    std::vector<Point> around;
    for (size_t k : byspeed) {
      for (const Point &q : space.neighbours(measured[k].first))
        if (!seen.count(space.key(q)))
          around.push_back(q);
      if (!around.empty())
        break;
    }
    std::shuffle(around.begin(), around.end(), rng);
    if (around.empty())
      around.push_back(space.random(rng));
    queue.insert(queue.end(), around.begin(), around.end());
    if (seen.size() >= space.size())
      return std::nullopt;
  }
  return std::nullopt;
}

/// xxh3 of a file's bytes, or "" when unreadable.
std::string hashFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  return llvm::formatv("{0:x-16}", llvm::xxh3_64bits((*buffer)->getBuffer())).str();
}

TuningCandidate Tuner::judge(const std::string &so) {
  // Schedules that differ only where the lowering resolves them alike
  // (pv_vectors=4 and auto on AVX-512, say) compile to the same bytes;
  // timing them again would only measure noise.
  std::string object = hashFile(so);
  if (!object.empty() && object == defaultObject) {
    ++counts.sameObject;
    TuningCandidate c;
    c.status = "ok";
    c.detail = "the same kernel as the default schedule (not timed)";
    c.speedup = 1;
    c.medianMs = c.defaultMs = entry.defaultMs();
    c.object = object;
    return c;
  }
  for (const TuningCandidate &earlier : entry.candidates)
    if (!object.empty() && earlier.object == object) {
      ++counts.sameObject;
      TuningCandidate c = earlier;
      c.detail = "the same kernel as " + earlier.backend + " " + earlier.schedule +
                 " (not timed)";
      return c;
    }
  TuningCandidate c = measure(problem, defaultSo, so, rounds);
  c.object = object;
  return c;
}

llvm::Expected<bool> Tuner::consider(const Point &p) {
  std::string key = space.key(p), schedule = space.schedule(p);
  if (!seen.insert(key).second || !space.inShard(p, shard, shards))
    return false;
  for (const TuningCandidate &c : entry.candidates)
    if (c.backend == p.backend && c.schedule == schedule) {
      ++counts.fromDb;
      if (c.ok())
        measured.push_back({p, c.speedup});
      return false;
    }
  llvm::SmallVector<std::string> assignments;
  for (llvm::StringRef a : llvm::split(schedule, ','))
    assignments.push_back(a.str());
  auto selection = select(p.backend, targetName, assignments);
  if (!selection)
    return selection.takeError();
  std::string misfit = scheduleMisfit(*selection, headDim);
  if (!misfit.empty()) {
    ++counts.pruned[llvm::StringRef(misfit).split(':').first];
    return false;
  }
  ++compiled;
  TuningCandidate c;
  auto so = compiler.compile(p.backend, schedule, injectFault == compiled, compiled);
  if (!so) {
    c.status = "compile-error";
    c.detail = llvm::toString(so.takeError());
  } else {
    c = judge(*so);
    llvm::sys::fs::remove(*so);
  }
  c.backend = p.backend;
  c.schedule = schedule;
  entry.candidates.push_back(c);
  if (c.ok())
    measured.push_back({p, c.speedup});
  ++counts.tried;
  if (llvm::Error err = db.save(dbFile))
    return std::move(err);
  progress(c);
  return true;
}

void Tuner::progress(const TuningCandidate &c) {
  double t = elapsed();
  std::string eta;
  double limit = timeLimit();
  if (trials) {
    double perTrial = t / counts.tried;
    double left = perTrial * (double(trials) - entry.candidates.size());
    eta = clock(limit > 0 ? std::min(left, limit - t) : left);
  } else {
    eta = clock(std::max(0.0, limit - t));
  }
  const TuningCandidate *best = entry.best();
  std::string verdict = c.ok() ? llvm::formatv("{0:f2}x", c.speedup).str() : c.status;
  llvm::errs() << llvm::formatv("[{0,3}{1} {2} ETA {3}] {4,-13} {5} {6} | best {7}\n",
                                entry.candidates.size(), trials ? "/" + std::to_string(trials) : "",
                                clock(t), eta, verdict, c.backend, c.schedule,
                                best ? llvm::formatv("{0:f2}x {1} {2}", best->speedup,
                                                     best->backend, best->schedule)
                                           .str()
                                     : std::string("the default"));
}

llvm::Error Tuner::run(const std::string &so) {
  defaultSo = so;
  defaultObject = hashFile(so);
  if (!shardArg.empty()) {
    auto [i, n] = llvm::StringRef(shardArg).split('/');
    if (i.getAsInteger(10, shard) || n.getAsInteger(10, shards) || shards < 1 || shard < 0 ||
        shard >= shards)
      return error("--shard " + shardArg + ": expected i/n with 0 <= i < n");
  }
  exhaustive = searchKind == Search::exhaustive ||
               (searchKind == Search::automatic && space.size() <= 64);
  counts.search = llvm::formatv("{0} over {1:0} points{2}", exhaustive ? "exhaustive" : "guided",
                                space.size(),
                                shards > 1 ? " (shard " + shardArg + ")" : "");
  if (exhaustive) {
    std::vector<Point> all = space.all();
    queue.assign(all.begin(), all.end());
  } else {
    for (const std::string &backend : space.backends()) {
      queue.push_back(space.defaultPoint(backend));
      for (const Point &p : space.choiceVariants(backend))
        queue.push_back(p);
    }
    for (int i = 0; i < 8; ++i)
      queue.push_back(space.random(rng));
  }
  while (!done()) {
    std::optional<Point> p = next();
    if (!p)
      break;
    if (auto counted = consider(*p); !counted)
      return counted.takeError();
  }
  counts.seconds = elapsed();
  return llvm::Error::success();
}

llvm::Error Tuner::confirm() {
  // Until the best is a confirmed one (or none beats the default), at most
  // --confirm re-timings.
  for (unsigned i = 0; i < confirmCount; ++i) {
    auto *best = const_cast<TuningCandidate *>(entry.best());
    if (!best || best->rounds >= confirmRounds)
      break;
    ++compiled;
    auto so = compiler.compile(best->backend, best->schedule, false, compiled);
    if (!so)
      return so.takeError(); // it compiled before: the machine changed under us
    TuningCandidate again = measure(problem, defaultSo, *so, confirmRounds);
    llvm::sys::fs::remove(*so);
    llvm::errs() << llvm::formatv("confirming {0} {1}: {2} {3:f2}x over {4} rounds, was "
                                  "{5:f2}x over {6}\n",
                                  best->backend, best->schedule, again.status, again.speedup,
                                  confirmRounds, best->speedup, best->rounds);
    again.backend = best->backend;
    again.schedule = best->schedule;
    *best = again;
    if (llvm::Error err = db.save(dbFile))
      return err;
  }
  return llvm::Error::success();
}

/// The kernel to tune.
llvm::Expected<attn::KernelOp> selectKernel(ModuleOp module) {
  llvm::SmallVector<attn::KernelOp> kernels(module.getOps<attn::KernelOp>());
  for (attn::KernelOp kernel : kernels)
    if (kernelName.empty() ? kernels.size() == 1 : kernel.getSymName() == kernelName)
      return kernel;
  std::string names;
  for (attn::KernelOp kernel : kernels)
    names += " @" + kernel.getSymName().str();
  return error(kernels.empty() ? specFile + " holds no attn.kernel"
                               : (kernelName.empty() ? "--kernel is needed to choose among"
                                                     : "no kernel @" + kernelName +
                                                           "; choose among") +
                                     names);
}

/// The head size of a kernel attnc-tune tunes: an attention spec or a
/// linear attention; any other kernel is an error that says why.
llvm::Expected<int64_t> tunedHeadDim(attn::KernelOp kernel) {
  if (auto linear = dyn_cast_or_null<attn::LinearAttentionOp>(kernel.getCompute().getOperation()))
    return linear.getDim();
  if (!kernel.getSpec())
    return error(attnc::locationText(kernel.getCompute()->getLoc()) + ": @" +
                 kernel.getSymName() + " is a " + kernel.getCompute().getFamily() +
                 " kernel; attnc-tune searches the schedules of attention specs and linear "
                 "attentions");
  // A tiled kernel's tile sizes are fixed in its attn.flash: there is no schedule to search.
  if (!kernel.getAttention())
    return error(attnc::locationText(kernel.getSpec()->getLoc()) + ": @" +
                 kernel.getSymName() + " holds its tiled form (attn.flash), whose tiles "
                 "are fixed; attnc-tune searches the schedules of a spec (attn.attention): "
                 "tune the spec it was tiled from");
  // A backward spec's calls take d_out and give dq, dk and dv: not the forward
  // problem the check and timing run.
  if (kernel.getAttention().hasOutput(attn::OutputKind::dq))
    return error(attnc::locationText(kernel.getSpec()->getLoc()) + ": @" +
                 kernel.getSymName() + " computes gradients (outputs = [dq, dk, dv]); "
                 "attnc-tune does not tune backward kernels yet: tune its forward spec");
  return kernel.getAttention().getDim();
}

/// The spec with `kernel`'s scale changed by half (for --inject-fault); a
/// linear attention's feature map changed instead (its normalizer cancels
/// the scale): identity for elu + 1 and relu, elu + 1 for identity.
llvm::Error writeFaultySpec(ModuleOp module, attn::KernelOp kernel, llvm::StringRef path) {
  OwningOpRef<ModuleOp> copy = module.clone();
  auto f64 = mlir::Float64Type::get(module.getContext());
  for (attn::KernelOp k : copy->getOps<attn::KernelOp>()) {
    if (k.getSymName() != kernel.getSymName())
      continue;
    if (auto linear = dyn_cast_or_null<attn::LinearAttentionOp>(k.getCompute().getOperation()))
      linear.setFeatureMap(linear.getFeatureMap() == attn::FeatureMap::identity
                               ? attn::FeatureMap::elu1
                               : attn::FeatureMap::identity);
    else
      k.getAttention().setScaleAttr(
          mlir::FloatAttr::get(f64, k.getAttention().getScaleOrDefault() * 1.5));
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return error("cannot write " + path + ": " + ec.message());
  copy->print(os);
  return llvm::Error::success();
}

/// The options' checks; the target to tune, which must run here.
llvm::Expected<CpuTarget> checkOptions() {
  if (dbFile.empty())
    return error("--db DB is required (it is created, or resumed when it exists)");
  if (rounds < 1 || rounds > 1000 || confirmRounds < 1 || confirmRounds > 1000)
    return error("--rounds and --confirm-rounds must be in [1, 1000]");
  if (threads < 0 || threads > 256)
    return error("--num-threads must be in [0, 256]");
  // Written as !(x > 0) so that NaN fails too; a negative timeout would make
  // poll() wait forever, a huge one overflow its milliseconds.
  if (budget.getNumOccurrences() && !(budget > 0 && std::isfinite(budget)))
    return error("--budget must be positive");
  if (!(timeout > 0 && timeout <= 86400))
    return error("--candidate-timeout must be in (0, 86400] seconds");
  auto cpu = lookupCpuTarget(targetName);
  if (!cpu)
    return error("attnc-tune times candidates on this machine, so it tunes CPU targets it runs: " +
                 llvm::toString(cpu.takeError()));
  if (!cpu->runsHere())
    return error("this machine cannot run target " + targetName + " (" + cpu->needs + ")");
  return cpu;
}

/// The directory candidates are built in.
llvm::Expected<std::string> makeWorkDir() {
  if (!workDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(workDir))
      return error("cannot create " + workDir + ": " + ec.message());
    return workDir.getValue();
  }
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("attnc-tune", dir))
    return error("cannot create a temporary directory: " + ec.message());
  return dir.str().str();
}

llvm::Error runTune(ModuleOp module, const char *argv0) {
  auto cpu = checkOptions();
  if (!cpu)
    return cpu.takeError();
  auto kernel = selectKernel(module);
  if (!kernel)
    return kernel.takeError();
  auto headDim = tunedHeadDim(*kernel);
  if (!headDim)
    return headDim.takeError();
  // A non-causal linear attention has no chunk: its space is the backends.
  std::vector<std::string> restrictions(spaceArgs.begin(), spaceArgs.end());
  auto linear = dyn_cast_or_null<attn::LinearAttentionOp>(kernel->getCompute().getOperation());
  if (linear && !linear.getCausal())
    restrictions.push_back("chunk=auto");
  std::vector<std::string> backends(backendNames.begin(), backendNames.end());
  if (backends.empty())
    backends.assign(attnc::backendNames().begin(), attnc::backendNames().end());
  // An attention spec (attn.attention) becomes the attention family's attn.flash.
  auto space = SearchSpace::build(backends, cpu->vectorWidth, restrictions,
                                  linear ? linear.getFamily() : "attention");
  if (!space)
    return space.takeError();

  TuningDb db;
  if (llvm::sys::fs::exists(dbFile)) {
    auto loaded = TuningDb::load(dbFile);
    if (!loaded)
      return loaded.takeError();
    db = std::move(*loaded);
  }
  int64_t kv = seqKv.getNumOccurrences() ? int64_t(seqKv) : int64_t(seqQ);
  TuningKey key{kernelSpecHash(*kernel), kernel->getSymName().str(), targetName,
                llvm::sys::getHostCPUName().str(), shapeBucket(seqQ, kv)};
  TuningEntry &entry = db.entryFor(key);
  entry.measured = llvm::formatv("batch {0}, seq_q {1}, seq_kv {2}, {3} threads, {4} rounds",
                                 batch, seqQ, kv, threads ? std::to_string(threads) : "all",
                                 rounds);

  auto dir = makeWorkDir();
  if (!dir)
    return dir.takeError();
  // A temporary work directory goes on every way out: errors below, and SIGINT / SIGTERM.
  static std::string temporaryDir;
  if (workDir.empty()) {
    temporaryDir = *dir;
    llvm::sys::SetInterruptFunction([] { llvm::sys::fs::remove_directories(temporaryDir); });
  }
  llvm::scope_exit removeDir([&] {
    if (workDir.empty())
      llvm::sys::fs::remove_directories(*dir);
  });
  Compiler compiler;
  compiler.attnc = attncPath;
  compiler.installPrefix =
      llvm::sys::path::parent_path(
          llvm::sys::path::parent_path(llvm::sys::fs::getMainExecutable(argv0, (void *)&runTune)))
          .str();
  compiler.spec = specFile;
  compiler.target = targetName;
  compiler.workDir = *dir;
  if (injectFault) {
    compiler.faultySpec = *dir + "/faulty.mlir";
    if (llvm::Error err = writeFaultySpec(module, *kernel, compiler.faultySpec))
      return err;
  }
  auto defaultSo = compiler.compile(attnc::backendNames().front().str(), "", false, 0);
  if (!defaultSo)
    return error("the default schedule does not compile: " + llvm::toString(defaultSo.takeError()));
  auto problem = makeProblem(*kernel, {batch, seqQ, kv, checkSeq, seed});
  if (!problem)
    return problem.takeError();
  (*problem)->threads = threads;
  (*problem)->timeoutSeconds = timeout;

  Tuner tuner(db, entry, *space, compiler, **problem, *headDim);
  llvm::Error err = tuner.run(*defaultSo);
  if (!err)
    err = tuner.confirm();
  if (err)
    return err;
  if (llvm::Error err = db.save(dbFile))
    return err;
  printSummary(entry, tuner.counts, specFile, dbFile, llvm::outs());
  if (!reportDir.empty())
    return writeReport(entry, tuner.counts, *space, specFile, dbFile, reportDir);
  return llvm::Error::success();
}

llvm::Error merge() {
  TuningDb merged;
  for (const std::string &path : mergeInputs) {
    auto db = TuningDb::load(path);
    if (!db)
      return db.takeError();
    merged.merge(*db);
  }
  if (llvm::Error err = merged.save(mergeOutput))
    return err;
  size_t candidates = 0;
  for (const TuningEntry &e : merged.entries)
    candidates += e.candidates.size();
  llvm::outs() << llvm::formatv("merged {0} DBs into {1}: {2} entries, {3} candidates\n",
                                mergeInputs.size(), mergeOutput, merged.entries.size(),
                                candidates);
  return llvm::Error::success();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // The in-process compiles run attnc's pipeline, which applies MLIR's pass
  // manager and timing options (hidden here, at their defaults) as attnc does.
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  attnc::showOnlyOptionsIn({&searchCat, &problemCat}, "", nullptr);
  cl::ParseCommandLineOptions(argc, argv,
                              "attnc-tune: search schedules, check every candidate against "
                              "the reference, write a tuning DB\n");
  llvm::Error err = llvm::Error::success();
  std::optional<attnc::SpecFile> spec;
  if (mergeCmd) {
    err = merge();
  } else if (specFile.empty()) {
    err = error("no spec given (attnc-tune --help)");
  } else {
    spec.emplace();
    OwningOpRef<ModuleOp> module = spec->parse(specFile, "attnc-tune");
    if (!module)
      return 1;
    err = runTune(*module, argv[0]);
  }
  if (err) {
    llvm::outs().flush();
    llvm::WithColor::error(llvm::errs(), "attnc-tune") << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  return 0;
}
