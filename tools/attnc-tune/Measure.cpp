//===- Measure.cpp - compiling, checking and timing a candidate -----------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Measure.h"

#include "attnc/Target/Compile.h"
#include "attnc/Tools/SpecFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace attnc;
using namespace attnc::tune;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The first line of `text` that says "error", else its first line.
static std::string firstErrorLine(llvm::StringRef text) {
  std::string first = text.split('\n').first.str();
  for (llvm::StringRef rest = text; !rest.empty();) {
    auto [line, tail] = rest.split('\n');
    if (line.contains("error"))
      return line.str();
    rest = tail;
  }
  return first;
}

/// Compiles `specPath` to the shared object `so` in process, in a context of
/// its own; the error is the first error line the compile printed or gave.
static llvm::Error compileInProcess(llvm::StringRef specPath, const std::string &backend,
                                    const std::string &target, const std::string &schedule,
                                    llvm::StringRef so, llvm::StringRef installPrefix) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  // No thread pool: measuring forks, and a forked child must not inherit one.
  SpecFile file(os, /*threading=*/false);
  auto module = file.parse(specPath, "attnc-tune");
  llvm::Error err = llvm::Error::success();
  if (!module) {
    err = error("cannot parse " + specPath);
  } else {
    llvm::SmallVector<llvm::StringRef> assignments;
    llvm::StringRef(schedule).split(assignments, ',', -1, /*KeepEmpty=*/false);
    std::vector<std::string> list(assignments.begin(), assignments.end());
    llvm::Expected<Selection> selection = select(backend, target, list);
    CompileOutput output;
    output.path = so.str();
    output.installPrefix = installPrefix.str();
    output.specFile = specPath.str();
    output.jobs = 1;
    err = selection ? compileSpec(*module, *selection, EmitStage::so, output)
                    : selection.takeError();
  }
  if (!err)
    return llvm::Error::success();
  std::string message = llvm::toString(std::move(err));
  std::string line = firstErrorLine(printed.empty() ? message : printed);
  return error(line.empty() ? "the compile failed" : line);
}

llvm::Expected<std::string> Compiler::compile(const std::string &backend,
                                              const std::string &schedule, bool faulty,
                                              unsigned serial) const {
  llvm::SmallString<256> so(workDir), log(workDir);
  llvm::sys::path::append(so, llvm::formatv("candidate-{0}.so", serial));
  llvm::sys::path::append(log, llvm::formatv("candidate-{0}.log", serial));
  if (attnc.empty()) {
    if (llvm::Error err = compileInProcess(faulty ? faultySpec : spec, backend, target,
                                           schedule, so, installPrefix))
      return std::move(err);
    return so.str().str();
  }
  std::string backendArg = "--backend=" + backend, targetArg = "--target=" + target;
  llvm::SmallVector<llvm::StringRef> args{attnc, faulty ? faultySpec : spec, backendArg,
                                          targetArg, "--emit=so", "-o", so};
  std::string scheduleArg = "--schedule=" + schedule;
  if (!schedule.empty())
    args.push_back(scheduleArg);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(attnc, args, std::nullopt, redirects, 0, 0, &message);
  if (rc == 0)
    return so.str().str();
  std::string first = message;
  if (auto text = llvm::MemoryBuffer::getFile(log))
    first = firstErrorLine((*text)->getBuffer());
  return error(first.empty() ? "attnc exited with status " + std::to_string(rc) : first);
}

namespace {

/// What the measuring process sends back (one write, below PIPE_BUF).
struct Wire {
  char status[16];
  char detail[400];
  double medianMs, spreadPct, defaultMs, speedup;
};

void setText(char *field, size_t size, const std::string &text) {
  std::strncpy(field, text.c_str(), size - 1);
  field[size - 1] = 0;
}

double seconds(ProblemTensors &t, const LoadedKernel &k, int threads, llvm::Error &err) {
  auto start = std::chrono::steady_clock::now();
  err = t.call(k, threads);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

/// The measuring process's work; returns the verdict.
Wire checkAndTime(const Problem &p, const std::string &defaultSo, const std::string &so,
                  int rounds) {
  Wire w{};
  auto fail = [&](const char *status, const std::string &detail) {
    setText(w.status, sizeof w.status, status);
    setText(w.detail, sizeof w.detail, detail);
    return w;
  };
  auto candidate = loadKernel(so, p.kernel, /*global=*/false);
  if (!candidate)
    return fail("run-error", llvm::toString(candidate.takeError()));
  auto baseline = loadKernel(defaultSo, p.kernel, /*global=*/false);
  if (!baseline)
    return fail("run-error", llvm::toString(baseline.takeError()));
  if (llvm::Error err = p.check->call(*candidate, p.threads))
    return fail("run-error", llvm::toString(std::move(err)));
  std::string off = p.check->offReference();
  if (!off.empty())
    return fail("wrong", off);
  // Warm both up, then alternate which runs first in each round.
  std::vector<double> mine, theirs, ratios;
  llvm::Error err = llvm::Error::success();
  for (int r = -1; r < rounds; ++r) {
    double a = 0, b = 0;
    bool candidateFirst = r % 2;
    for (int which : {candidateFirst ? 0 : 1, candidateFirst ? 1 : 0}) {
      double t = seconds(*p.timing, which ? *baseline : *candidate, p.threads, err);
      if (err)
        return fail("run-error", llvm::toString(std::move(err)));
      (which ? b : a) = t;
    }
    if (r < 0)
      continue;
    mine.push_back(a);
    theirs.push_back(b);
    ratios.push_back(b / a);
  }
  double m = median(mine);
  setText(w.status, sizeof w.status, "ok");
  w.medianMs = m * 1e3;
  w.spreadPct = 100 * (*std::max_element(mine.begin(), mine.end()) -
                       *std::min_element(mine.begin(), mine.end())) / m;
  w.defaultMs = median(theirs) * 1e3;
  w.speedup = median(ratios);
  return w;
}

std::string signalText(int status) {
  if (WIFSIGNALED(status))
    return llvm::formatv("the measuring process died of signal {0} ({1})", WTERMSIG(status),
                         strsignal(WTERMSIG(status)));
  return llvm::formatv("the measuring process exited with status {0} without a verdict",
                       WEXITSTATUS(status));
}

} // namespace

TuningCandidate attnc::tune::measure(const Problem &p, const std::string &defaultSo,
                                     const std::string &so, int rounds) {
  TuningCandidate result;
  auto crashed = [&](const std::string &detail) {
    result.status = "crashed";
    result.detail = detail;
    return result;
  };
  int fds[2];
  if (pipe(fds))
    return crashed("cannot create a pipe: " + std::string(strerror(errno)));
  pid_t child = fork();
  if (child < 0)
    return crashed("cannot fork: " + std::string(strerror(errno)));
  if (child == 0) {
    close(fds[0]);
    Wire w = checkAndTime(p, defaultSo, so, rounds);
    ssize_t written = write(fds[1], &w, sizeof w);
    _exit(written == sizeof w ? 0 : 3);
  }
  close(fds[1]);
  Wire w{};
  struct pollfd pfd{fds[0], POLLIN, 0};
  int ready = poll(&pfd, 1, int(p.timeoutSeconds * 1000));
  ssize_t got = ready > 0 ? read(fds[0], &w, sizeof w) : 0;
  close(fds[0]);
  if (ready == 0)
    kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  if (ready == 0)
    return crashed(llvm::formatv("no verdict within {0} s (hung?); killed", p.timeoutSeconds));
  if (got != sizeof w)
    return crashed(signalText(status));
  result.status = w.status;
  result.detail = w.detail;
  result.medianMs = w.medianMs;
  result.spreadPct = w.spreadPct;
  result.defaultMs = w.defaultMs;
  result.speedup = w.speedup;
  result.rounds = result.ok() ? rounds : 0;
  return result;
}
