//===- Tunables.h - a backend's schedule parameters, declared once -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each backend declares its tunables once (name, default, range, meaning), in
// the style of Halide's GeneratorParams. `attnc --schedule name=value`,
// `attnc --list-tunables`, `attnc explain` and the autotuner's search space
// all read that one declaration.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TARGET_TUNABLES_H
#define ATTNC_TARGET_TUNABLES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace attnc {

struct Tunable {
  llvm::StringRef name;
  /// 0 where `automatic` says what "chosen automatically" means.
  int64_t defaultValue;
  /// Inclusive range of explicit values.
  int64_t min, max;
  /// Explicit values must be a multiple of the target's vector width (f32 lanes).
  bool multipleOfVectorWidth;
  llvm::StringRef meaning;
  /// What the default 0 stands for; empty when 0 is not allowed.
  llvm::StringRef automatic;
  /// Named values (an enumeration): the value is an index into these, set and
  /// printed by name; empty for a number.
  llvm::ArrayRef<llvm::StringRef> choices = {};
  /// Explicit values must be powers of two.
  bool powerOfTwo = false;
  /// The kernel family whose kernels it shapes (KernelFamilyOpInterface's
  /// getFamily()): attnc-tune searches a kernel's family's tunables alone.
  llvm::StringRef family = "attention";
};

/// Values of a backend's tunables for one compilation: explicit ones from
/// --schedule, the rest at their default (0 = chosen automatically).
class Schedule {
public:
  explicit Schedule(llvm::ArrayRef<Tunable> tunables) : tunables(tunables) {}

  /// Applies `name=value`; an unknown name, a malformed or out-of-range value
  /// is an error naming what would be valid. Tile sizes must be multiples of
  /// `step`, which `stepMeaning` names ("" : the target's vector width).
  llvm::Error set(llvm::StringRef assignment, int64_t step,
                  llvm::StringRef stepMeaning = "");
  int64_t get(llvm::StringRef name) const;
  /// The value of `name`, or `automatic` where it is chosen automatically (0).
  int64_t getOr(llvm::StringRef name, int64_t automatic) const {
    int64_t v = get(name);
    return v ? v : automatic;
  }
  /// The name of an enumerated tunable's value.
  llvm::StringRef getChoice(llvm::StringRef name) const;
  bool isExplicit(llvm::StringRef name) const { return values.count(name); }
  /// Whether this schedule (its target's table) has `name`.
  bool declares(llvm::StringRef name) const { return find(name) != tunables.end(); }
  llvm::ArrayRef<Tunable> declaration() const { return tunables; }
  /// "block_q=auto block_kv=64 ..." (auto where chosen automatically): the
  /// tunables of `family`'s kernels, or every one.
  void print(llvm::raw_ostream &os, llvm::StringRef family = "") const;

private:
  /// The declaration of `name`, or tunables.end().
  const Tunable *find(llvm::StringRef name) const;

  llvm::ArrayRef<Tunable> tunables;
  llvm::StringMap<int64_t> values;
};

/// One table of name, default, range and meaning per tunable.
/// The table `attnc --list-tunables` prints: each tunable of `schedule` with
/// its meaning, its default (the schedule's value where the target presets
/// one) and its range, tile sizes in multiples of `step` (`stepMeaning`).
void printTunables(const Schedule &schedule, int64_t step, llvm::StringRef stepMeaning,
                   llvm::raw_ostream &os);

} // namespace attnc

#endif // ATTNC_TARGET_TUNABLES_H
