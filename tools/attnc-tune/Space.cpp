//===- Space.cpp - attnc-tune's search space ------------------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Space.h"

#include "attnc/Target/Registry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

using namespace attnc;
using namespace attnc::tune;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A tunable's full domain: auto where allowed, then its values.
static std::vector<int64_t> fullDomain(const Tunable &t, int64_t vectorWidth) {
  std::vector<int64_t> values;
  if (!t.choices.empty()) {
    for (size_t i = 0; i < t.choices.size(); ++i)
      values.push_back(i);
    return values;
  }
  if (!t.automatic.empty())
    values.push_back(0);
  if (!t.multipleOfVectorWidth && !t.powerOfTwo) {
    for (int64_t v = t.min; v <= t.max; ++v)
      values.push_back(v);
    return values;
  }
  for (int64_t v = t.multipleOfVectorWidth ? vectorWidth : 1; v <= t.max; v *= 2)
    if (v >= t.min)
      values.push_back(v);
  return values;
}

/// Applies name=v1|v2|... to the domain of `t` (values checked by Schedule).
static llvm::Error narrow(std::vector<int64_t> &values, llvm::ArrayRef<Tunable> declaration,
                          const Tunable &t, llvm::StringRef list, int64_t vectorWidth) {
  llvm::SmallVector<llvm::StringRef> texts;
  llvm::SplitString(list, texts, "|");
  values.clear();
  for (llvm::StringRef text : texts) {
    Schedule s(declaration);
    if (llvm::Error err = s.set((t.name + "=" + text).str(), vectorWidth))
      return err;
    values.push_back(s.get(t.name));
  }
  if (values.empty())
    return error("--space " + t.name + "=: no values");
  return llvm::Error::success();
}

llvm::Expected<SearchSpace> SearchSpace::build(llvm::ArrayRef<std::string> backends,
                                               int64_t vectorWidth,
                                               llvm::ArrayRef<std::string> restrictions,
                                               llvm::StringRef family) {
  SearchSpace space;
  std::vector<bool> used(restrictions.size(), false);
  for (const std::string &backend : backends) {
    if (!llvm::is_contained(attnc::backendNames(), backend))
      return error("unknown backend '" + backend + "' in --backends (" +
                   llvm::join(attnc::backendNames(), ", ") + ")");
    llvm::ArrayRef<Tunable> declaration = tunablesOf(backend);
    std::vector<Domain> list;
    for (const Tunable &t : declaration) {
      if (t.family != family)
        continue;
      Domain d{&t, fullDomain(t, vectorWidth)};
      for (auto [i, r] : llvm::enumerate(restrictions)) {
        auto [name, values] = llvm::StringRef(r).split('=');
        if (name.trim() != t.name)
          continue;
        used[i] = true;
        if (llvm::Error err = narrow(d.values, declaration, t, values.trim(), vectorWidth))
          return std::move(err);
      }
      list.push_back(std::move(d));
    }
    space.backendNames.push_back(backend);
    space.domains.push_back(std::move(list));
  }
  for (auto [i, r] : llvm::enumerate(restrictions))
    if (!used[i])
      return error("--space " + r + ": no backend in --backends has that tunable for " +
                   family + " kernels");
  return space;
}

const std::vector<SearchSpace::Domain> &
SearchSpace::domainsOf(const std::string &backend) const {
  return domains[llvm::find(backendNames, backend) - backendNames.begin()];
}

double SearchSpace::size() const {
  double total = 0;
  for (const auto &list : domains) {
    double n = 1;
    for (const Domain &d : list)
      n *= d.values.size();
    total += n;
  }
  return total;
}

std::string SearchSpace::label(const Domain &d, size_t i) const {
  int64_t v = d.values[i];
  if (!d.tunable->choices.empty())
    return d.tunable->choices[v].str();
  return v == 0 && !d.tunable->automatic.empty() ? "auto" : std::to_string(v);
}

std::string SearchSpace::schedule(const Point &p) const {
  std::string text;
  for (auto [d, i] : llvm::zip_equal(domainsOf(p.backend), p.index))
    text += (text.empty() ? "" : ",") + d.tunable->name.str() + "=" + label(d, i);
  return text;
}

Point SearchSpace::defaultPoint(const std::string &backend) const {
  Point p{backend, {}};
  for (const Domain &d : domainsOf(backend)) {
    auto it = llvm::find(d.values, d.tunable->defaultValue);
    p.index.push_back(it == d.values.end() ? 0 : it - d.values.begin());
  }
  return p;
}

std::vector<Point> SearchSpace::all() const {
  std::vector<Point> points;
  for (const std::string &backend : backendNames) {
    const std::vector<Domain> &list = domainsOf(backend);
    Point p{backend, std::vector<size_t>(list.size(), 0)};
    while (true) {
      points.push_back(p);
      size_t k = 0; // odometer: the last tunable varies fastest
      for (k = list.size(); k-- > 0;) {
        if (++p.index[k] < list[k].values.size())
          break;
        p.index[k] = 0;
      }
      if (k == size_t(-1))
        break;
    }
  }
  return points;
}

std::vector<Point> SearchSpace::choiceVariants(const std::string &backend) const {
  std::vector<Point> points;
  Point base = defaultPoint(backend);
  const std::vector<Domain> &list = domainsOf(backend);
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k].tunable->choices.empty())
      continue;
    for (size_t i = 0; i < list[k].values.size(); ++i) {
      if (i == base.index[k])
        continue;
      Point p = base;
      p.index[k] = i;
      points.push_back(p);
    }
  }
  return points;
}

Point SearchSpace::random(std::mt19937_64 &rng) const {
  // Backends uniformly: the Halide backend's few tunables would otherwise be
  // drowned by the MLIR backend's register blocks.
  size_t b = std::uniform_int_distribution<size_t>(0, backendNames.size() - 1)(rng);
  Point p{backendNames[b], {}};
  for (const Domain &d : domains[b])
    p.index.push_back(std::uniform_int_distribution<size_t>(0, d.values.size() - 1)(rng));
  return p;
}

std::vector<Point> SearchSpace::neighbours(const Point &p) const {
  std::vector<Point> result;
  const std::vector<Domain> &list = domainsOf(p.backend);
  for (size_t k = 0; k < list.size(); ++k)
    for (int step : {-1, 1}) {
      size_t i = p.index[k] + step;
      if (i >= list[k].values.size()) // also wraps below 0
        continue;
      Point q = p;
      q.index[k] = i;
      result.push_back(q);
    }
  return result;
}

bool SearchSpace::inShard(const Point &p, int shard, int shards) const {
  return llvm::xxh3_64bits(llvm::StringRef(key(p))) % shards == uint64_t(shard);
}

std::vector<SearchSpace::Dimension> SearchSpace::dimensions() const {
  std::vector<Dimension> result;
  for (auto [backend, list] : llvm::zip_equal(backendNames, domains))
    for (const Domain &d : list) {
      Dimension dim{backend, d.tunable->name.str(), {}};
      for (size_t i = 0; i < d.values.size(); ++i)
        dim.labels.push_back(label(d, i));
      result.push_back(std::move(dim));
    }
  return result;
}
