//===- TuningDb.cpp - attnc-tune's results, read by attnc -----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Autotune/TuningDb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace attnc;
namespace json = llvm::json;

static constexpr llvm::StringLiteral kFormat = "attnc-tuning-db";

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static double median(std::vector<double> xs) {
  if (xs.empty())
    return 0;
  std::sort(xs.begin(), xs.end());
  return xs[xs.size() / 2];
}

const TuningCandidate *TuningEntry::best(llvm::StringRef backend) const {
  const TuningCandidate *best = nullptr;
  // With a backend named, its fastest correct candidate, even if slower
  // than the (MLIR) default: the user asked for that backend.
  for (const TuningCandidate &c : candidates)
    if (c.ok() && (backend.empty() ? c.speedup > 1 : c.backend == backend) &&
        (!best || c.speedup > best->speedup))
      best = &c;
  return best;
}

double TuningEntry::defaultMs() const {
  std::vector<double> times;
  for (const TuningCandidate &c : candidates)
    if (c.defaultMs > 0)
      times.push_back(c.defaultMs);
  return median(times);
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static json::Value toJson(const TuningCandidate &c) {
  json::Object o{{"backend", c.backend}, {"schedule", c.schedule}, {"status", c.status}};
  if (!c.detail.empty())
    o["detail"] = c.detail;
  if (!c.object.empty())
    o["object"] = c.object;
  if (c.ok()) { // rejected candidates are never timed
    o["median_ms"] = c.medianMs;
    o["spread_pct"] = c.spreadPct;
    o["default_ms"] = c.defaultMs;
    o["speedup"] = c.speedup;
    o["rounds"] = c.rounds;
  }
  return o;
}

static json::Value toJson(const TuningEntry &e) {
  json::Array candidates;
  for (const TuningCandidate &c : e.candidates)
    candidates.push_back(toJson(c));
  json::Object o{{"spec_hash", e.key.specHash}, {"kernel", e.key.kernel},
                 {"target", e.key.target},      {"cpu", e.key.cpu},
                 {"shape", e.key.shape},        {"measured", e.measured},
                 {"candidates", std::move(candidates)}};
  // Derived, for readers; load() recomputes it.
  if (const TuningCandidate *b = e.best())
    o["best"] = json::Object{{"backend", b->backend}, {"schedule", b->schedule},
                             {"speedup", b->speedup}};
  return o;
}

/// Reads a field of a JSON object, recording the first error as "at PATH: ...".
class Reader {
public:
  explicit Reader(std::string &firstError) : firstError(firstError) {}

  std::string str(const json::Object &o, llvm::StringRef field, const llvm::Twine &where,
                  bool required = true) {
    if (auto s = o.getString(field))
      return s->str();
    if (required)
      fail(where + "." + field + ": expected a string");
    return "";
  }
  double num(const json::Object &o, llvm::StringRef field, const llvm::Twine &where) {
    if (!o.get(field))
      return 0;
    if (auto x = o.getNumber(field))
      return *x;
    fail(where + "." + field + ": expected a number");
    return 0;
  }
  /// A whole number in [0, INT_MAX] (0 when absent): a count the DB's reader
  /// keeps as an int, where a larger double would not convert.
  int count(const json::Object &o, llvm::StringRef field, const llvm::Twine &where) {
    double x = num(o, field, where);
    if (x >= 0 && x <= std::numeric_limits<int>::max() && x == std::floor(x))
      return int(x);
    fail(where + "." + field + ": expected a whole number in [0, " +
         llvm::Twine(std::numeric_limits<int>::max()) + "]");
    return 0;
  }
  void fail(const llvm::Twine &message) {
    if (firstError.empty())
      firstError = message.str();
  }

private:
  std::string &firstError;
};

static std::optional<TuningCandidate> readCandidate(const json::Value &v, Reader &r,
                                                    const std::string &where) {
  const json::Object *o = v.getAsObject();
  if (!o) {
    r.fail(where + ": expected an object");
    return std::nullopt;
  }
  TuningCandidate c;
  c.backend = r.str(*o, "backend", where);
  c.schedule = r.str(*o, "schedule", where);
  c.status = r.str(*o, "status", where);
  c.detail = r.str(*o, "detail", where, /*required=*/false);
  c.object = r.str(*o, "object", where, /*required=*/false);
  c.medianMs = r.num(*o, "median_ms", where);
  c.spreadPct = r.num(*o, "spread_pct", where);
  c.defaultMs = r.num(*o, "default_ms", where);
  c.speedup = r.num(*o, "speedup", where);
  c.rounds = r.count(*o, "rounds", where);
  static constexpr llvm::StringLiteral statuses[] = {"ok", "wrong", "compile-error",
                                                     "crashed", "run-error"};
  if (!c.status.empty() && !llvm::is_contained(statuses, c.status))
    r.fail(where + ".status: unknown status '" + c.status + "'");
  return c;
}

static std::optional<TuningEntry> readEntry(const json::Value &v, Reader &r,
                                            const std::string &where) {
  const json::Object *o = v.getAsObject();
  if (!o) {
    r.fail(where + ": expected an object");
    return std::nullopt;
  }
  TuningEntry e;
  e.key = {r.str(*o, "spec_hash", where), r.str(*o, "kernel", where),
           r.str(*o, "target", where), r.str(*o, "cpu", where), r.str(*o, "shape", where)};
  e.measured = r.str(*o, "measured", where, /*required=*/false);
  const json::Array *candidates = o->getArray("candidates");
  if (!candidates) {
    r.fail(where + ".candidates: expected an array");
    return std::nullopt;
  }
  for (auto [i, c] : llvm::enumerate(*candidates))
    if (auto candidate = readCandidate(c, r, where + ".candidates[" + std::to_string(i) + "]"))
      e.candidates.push_back(std::move(*candidate));
  return e;
}

/// A tuning DB nests four levels (root, entries, an entry, its candidates); llvm::json's
/// parser recurses once per level, so a hostile file nesting thousands deep would overflow the
/// stack: anything nesting deeper than this is refused before parsing.
static constexpr int kMaxDbNesting = 32;
/// Far above any DB attnc-tune writes (about 1 KB per candidate), and a bound on what a path
/// like /dev/zero could make the reader hold.
static constexpr uint64_t kMaxDbBytes = 256ull << 20;

/// The byte offset where `text` first nests JSON arrays and objects deeper than `limit`, if
/// it does (brackets inside strings do not count).
static std::optional<size_t> tooDeep(llvm::StringRef text, int limit) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if ((c == '[' || c == '{') && ++depth > limit)
      return i;
    else if (c == ']' || c == '}')
      --depth;
  }
  return std::nullopt;
}

/// The DB's bytes: a regular file of at most kMaxDbBytes.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readDbFile(llvm::StringRef path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return error("cannot read tuning DB " + path + ": " + ec.message());
  if (!llvm::sys::fs::is_regular_file(status))
    return error("tuning DB " + path + " is not a regular file");
  if (status.getSize() > kMaxDbBytes)
    return error(llvm::formatv("tuning DB {0} is {1} bytes; a tuning DB is at most {2}", path,
                               status.getSize(), kMaxDbBytes));
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return error("cannot read tuning DB " + path + ": " + buffer.getError().message());
  return std::move(*buffer);
}

llvm::Expected<TuningDb> TuningDb::load(llvm::StringRef path) {
  auto buffer = readDbFile(path);
  if (!buffer)
    return buffer.takeError();
  if (std::optional<size_t> at = tooDeep((*buffer)->getBuffer(), kMaxDbNesting))
    return error(llvm::formatv("tuning DB {0} nests arrays and objects more than {1} deep "
                               "(at byte {2}); it is not an attnc tuning DB",
                               path, kMaxDbNesting, *at));
  llvm::Expected<json::Value> value = json::parse((*buffer)->getBuffer());
  if (!value)
    return error("tuning DB " + path + " is not valid JSON (truncated or corrupt?): " +
                 llvm::toString(value.takeError()));
  const json::Object *root = value->getAsObject();
  if (!root || root->getString("format") != std::optional<llvm::StringRef>(kFormat))
    return error("tuning DB " + path + " is not an attnc tuning DB (no \"format\": \"" +
                 kFormat + "\")");
  std::optional<int64_t> version = root->getInteger("version");
  if (version != kTuningDbVersion)
    return error(llvm::formatv("tuning DB {0} has schema version {1}; this attnc reads "
                               "version {2} (re-run attnc-tune with this attnc)",
                               path, version ? std::to_string(*version) : "(none)",
                               kTuningDbVersion));
  const json::Array *entries = root->getArray("entries");
  if (!entries)
    return error("tuning DB " + path + ": \"entries\" must be an array");
  TuningDb db;
  std::string firstError;
  Reader r(firstError);
  for (auto [i, e] : llvm::enumerate(*entries))
    if (auto entry = readEntry(e, r, "entries[" + std::to_string(i) + "]"))
      db.entries.push_back(std::move(*entry));
  if (!firstError.empty())
    return error("tuning DB " + path + " is malformed at " + firstError);
  return db;
}

llvm::Error TuningDb::save(llvm::StringRef path) const {
  json::Array list;
  for (const TuningEntry &e : entries)
    list.push_back(toJson(e));
  json::Value root = json::Object{
      {"format", kFormat}, {"version", kTuningDbVersion}, {"entries", std::move(list)}};
  std::string temporary = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temporary, ec);
    if (ec)
      return error("cannot write " + temporary + ": " + ec.message());
    os << llvm::formatv("{0:2}", root) << "\n";
    if (os.has_error())
      return error("cannot write " + temporary + ": " + os.error().message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path))
    return error("cannot replace " + path + ": " + ec.message());
  return llvm::Error::success();
}

TuningEntry &TuningDb::entryFor(const TuningKey &key) {
  for (TuningEntry &e : entries)
    if (e.key == key)
      return e;
  entries.push_back(TuningEntry{key, "", {}});
  return entries.back();
}

void TuningDb::merge(const TuningDb &other) {
  for (const TuningEntry &theirs : other.entries) {
    TuningEntry &ours = entryFor(theirs.key);
    if (ours.measured.empty())
      ours.measured = theirs.measured;
    for (const TuningCandidate &c : theirs.candidates)
      if (llvm::none_of(ours.candidates, [&](auto &x) { return x.sameSchedule(c); }))
        ours.candidates.push_back(c);
  }
}

//===----------------------------------------------------------------------===//
// Keys and choice
//===----------------------------------------------------------------------===//

std::string attnc::kernelSpecHash(mlir::attn::KernelOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(os, mlir::OpPrintingFlags().useLocalScope());
  return llvm::formatv("{0:x-16}", llvm::xxh3_64bits(llvm::StringRef(text))).str();
}

std::string attnc::shapeBucket(int64_t seqQ, int64_t seqKv) {
  return llvm::formatv("q{0}-kv{1}", llvm::PowerOf2Ceil(seqQ), llvm::PowerOf2Ceil(seqKv));
}

static int64_t bucketCells(llvm::StringRef shape) {
  int64_t q = 0, kv = 0;
  auto [qs, kvs] = shape.split("-kv");
  (void)qs.drop_front().getAsInteger(10, q);
  (void)kvs.getAsInteger(10, kv);
  return q * kv;
}

TuningChoice attnc::chooseTuning(const TuningDb &db, mlir::attn::KernelOp kernel,
                                 llvm::StringRef target, llvm::StringRef backend) {
  std::string hash = kernelSpecHash(kernel), host = llvm::sys::getHostCPUName().str();
  llvm::StringRef name = kernel.getSymName();
  TuningChoice choice;
  std::vector<const TuningEntry *> matches;
  std::string others;
  for (const TuningEntry &e : db.entries) {
    if (e.key.specHash == hash && e.key.target == target)
      matches.push_back(&e);
    else if (e.key.kernel == name)
      others += llvm::formatv("; an entry for @{0} {1}", name,
                              e.key.specHash != hash
                                  ? "from a different spec (hash " + e.key.specHash +
                                        ", this one " + hash + ")"
                                  : "on target " + e.key.target);
  }
  if (matches.empty()) {
    choice.why = llvm::formatv("no entry for @{0} (spec hash {1}) on target {2}{3}", name,
                               hash, target, others.empty() ? "" : others);
    return choice;
  }
  // The host CPU's, then the longest sequences, then the most candidates.
  auto rank = [&](const TuningEntry *e) {
    return std::make_tuple(e->key.cpu == host, bucketCells(e->key.shape),
                           e->candidates.size());
  };
  choice.entry = *llvm::max_element(matches, [&](auto *a, auto *b) { return rank(a) < rank(b); });
  const TuningEntry &e = *choice.entry;
  choice.best = e.best(backend);
  std::string from = llvm::formatv(
      "entry for @{0} on {1}, tuned on {2}{3} at {4} (of {5} matching entries; "
      "preferred: this CPU, then the longest sequences)",
      name, target, e.key.cpu, e.key.cpu == host ? " (this CPU)" : " (not this CPU: " + host + ")",
      e.key.shape, matches.size());
  size_t ok = llvm::count_if(e.candidates, [](auto &c) { return c.ok(); });
  if (choice.best)
    choice.why = llvm::formatv("{0}: best of {1} candidates ({2} correct){3}: {4} backend, "
                               "{5:f2}x the speed of the default (mlir) schedule",
                               from, e.candidates.size(), ok,
                               backend.empty() ? "" : " with --backend=" + backend,
                               choice.best->backend, choice.best->speedup);
  else
    choice.why = llvm::formatv("{0}: no correct {1}candidate of {2} beat the default schedule, "
                               "which is kept",
                               from, backend.empty() ? "" : backend + " ", e.candidates.size());
  return choice;
}
