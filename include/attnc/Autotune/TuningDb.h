//===- TuningDb.h - attnc-tune's results, read by attnc ---------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A tuning DB is a JSON file (format "attnc-tuning-db", a schema version)
// holding one entry per (kernel spec hash, target, CPU model, shape bucket):
// every candidate schedule attnc-tune tried there, with its verdict and its
// time measured interleaved with the default schedule's. attnc-tune writes
// it after every candidate (so an interrupted search resumes), merges
// shards, and `attnc --tuning-db` / `attnc explain --tuning-db` pick from it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_AUTOTUNE_TUNINGDB_H
#define ATTNC_AUTOTUNE_TUNINGDB_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace attnc {

/// The schema version this build reads and writes.
constexpr int64_t kTuningDbVersion = 1;

/// What one entry was tuned for. Two entries with equal keys are merged.
struct TuningKey {
  std::string specHash; // kernelSpecHash of the kernel as written
  std::string kernel;   // its name, to explain a hash mismatch
  std::string target;   // attnc --target
  std::string cpu;      // LLVM's host CPU name where it was measured (znver5)
  std::string shape;    // bucket: q<pow2 >= seq_q>-kv<pow2 >= seq_kv>

  bool operator==(const TuningKey &o) const {
    return specHash == o.specHash && target == o.target && cpu == o.cpu && shape == o.shape;
  }
};

/// One schedule tried. `status`: ok, wrong (checked against the reference
/// and off), compile-error, crashed (signal or time-out in the measuring
/// process), run-error (the kernel returned an error).
struct TuningCandidate {
  std::string backend;  // mlir or halide
  std::string schedule; // every tunable, name=value comma-separated
  std::string status;
  std::string detail; // why it was rejected; empty when ok
  double medianMs = 0, spreadPct = 0; // spread: (slowest - fastest) / median
  double defaultMs = 0;               // the default schedule, interleaved with it
  double speedup = 0;                 // median over rounds of default / candidate
  int rounds = 0;                     // timing rounds behind these figures
  std::string object; // hash of the compiled kernel: equal hashes, equal code

  bool ok() const { return status == "ok"; }
  bool sameSchedule(const TuningCandidate &o) const {
    return backend == o.backend && schedule == o.schedule;
  }
};

struct TuningEntry {
  TuningKey key;
  std::string measured; // the exact problem timed: "batch 1, seq_q 2048, ..., 2 threads"
  std::vector<TuningCandidate> candidates;

  /// The fastest correct candidate that beats the default (speedup > 1), or
  /// none: then the default schedule is the best known. With `backend`, the
  /// fastest correct candidate of that backend, whatever its speedup.
  const TuningCandidate *best(llvm::StringRef backend = "") const;
  /// Median of the default's times measured next to the candidates.
  double defaultMs() const;
};

class TuningDb {
public:
  std::vector<TuningEntry> entries;

  /// Reads a DB; a missing file, malformed JSON, a truncated file, another
  /// format or another schema version is an error naming the file and what
  /// is wrong.
  static llvm::Expected<TuningDb> load(llvm::StringRef path);
  /// Writes atomically (a temporary file renamed over `path`), so a reader
  /// or an interrupted writer never leaves a half-written DB.
  llvm::Error save(llvm::StringRef path) const;
  /// The entry for `key`, created empty when missing.
  TuningEntry &entryFor(const TuningKey &key);
  /// Adds `other`'s entries and candidates; a candidate both have keeps this
  /// DB's measurement.
  void merge(const TuningDb &other);
};

/// A stable hash (16 hex digits) of one kernel's spec as printed: equal for
/// the same kernel whatever the file's whitespace, comments or other kernels.
std::string kernelSpecHash(mlir::attn::KernelOp kernel);

/// The power-of-two bucket of a problem's sequence lengths.
std::string shapeBucket(int64_t seqQ, int64_t seqKv);

/// What `attnc --tuning-db` takes for one kernel.
struct TuningChoice {
  const TuningEntry *entry = nullptr;   // null: no entry matched
  const TuningCandidate *best = nullptr; // null: the default schedule is best
  std::string why;                       // a sentence for explain and warnings
};

/// Picks the entry for `kernel` on `target`: entries with its spec hash and
/// target, preferring the host CPU's, then the longest sequences, then the
/// most candidates. `backend` non-empty restricts the best to that backend.
TuningChoice chooseTuning(const TuningDb &db, mlir::attn::KernelOp kernel,
                          llvm::StringRef target, llvm::StringRef backend);

} // namespace attnc

#endif // ATTNC_AUTOTUNE_TUNINGDB_H
