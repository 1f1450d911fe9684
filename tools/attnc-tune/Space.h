//===- Space.h - attnc-tune's search space -----------------------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The space is the backends' declared tunables (Tunables.h) of the tuned
// kernel's family, nothing of its own: each numeric tunable takes `auto`
// (where allowed) and the powers of two (times the vector width, for tile
// sizes; or every value, for small ranges) in its declared range; an
// enumerated one takes each name. `--space name=a|b` narrows a tunable to the
// values listed.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_ATTNC_TUNE_SPACE_H
#define ATTNC_TOOLS_ATTNC_TUNE_SPACE_H

#include "attnc/Target/Tunables.h"
#include "llvm/Support/Error.h"

#include <random>
#include <string>
#include <vector>

namespace attnc::tune {

/// One candidate: a backend and, per tunable it declares, an index into
/// that tunable's values.
struct Point {
  std::string backend;
  std::vector<size_t> index;
  bool operator==(const Point &o) const { return backend == o.backend && index == o.index; }
};

class SearchSpace {
public:
  /// `backends` in order of preference; `restrictions` as name=v1|v2|...;
  /// the tunables of `family`'s kernels (Tunable::family).
  static llvm::Expected<SearchSpace> build(llvm::ArrayRef<std::string> backends,
                                           int64_t vectorWidth,
                                           llvm::ArrayRef<std::string> restrictions,
                                           llvm::StringRef family);

  /// Number of points (the product of the domains, summed over backends).
  double size() const;
  /// "block_q=auto,block_kv=64,..." in declaration order, for --schedule.
  std::string schedule(const Point &p) const;
  /// The default schedule of `backend`, or the first value where the
  /// default is outside a narrowed domain.
  Point defaultPoint(const std::string &backend) const;
  std::vector<Point> all() const;
  /// The default of `backend` with one enumerated tunable set to each other
  /// value (each Halide autoscheduler at the default tiles, say).
  std::vector<Point> choiceVariants(const std::string &backend) const;
  Point random(std::mt19937_64 &rng) const;
  /// Points one step away: each tunable moved to the previous or next value.
  std::vector<Point> neighbours(const Point &p) const;
  /// "backend:schedule": what identifies a point in the DB and in a search.
  std::string key(const Point &p) const { return p.backend + ":" + schedule(p); }
  /// Whether `p` belongs to shard i of n (a stable hash of its key).
  bool inShard(const Point &p, int shard, int shards) const;
  /// Each tunable's name and printed values, per backend (for the report).
  struct Dimension {
    std::string backend, name;
    std::vector<std::string> labels;
  };
  std::vector<Dimension> dimensions() const;
  llvm::ArrayRef<std::string> backends() const { return backendNames; }

private:
  struct Domain {
    const Tunable *tunable;
    std::vector<int64_t> values;
  };
  const std::vector<Domain> &domainsOf(const std::string &backend) const;
  std::string label(const Domain &d, size_t i) const;

  std::vector<std::string> backendNames;
  std::vector<std::vector<Domain>> domains; // per backend
};

} // namespace attnc::tune

#endif // ATTNC_TOOLS_ATTNC_TUNE_SPACE_H
