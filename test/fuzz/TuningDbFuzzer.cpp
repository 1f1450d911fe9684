//===- TuningDbFuzzer.cpp - libFuzzer target: the tuning-DB reader --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// TuningDb::load, which attnc --tuning-db, attnc explain --tuning-db and
// attnc-tune --db / merge share, on hostile DBs. An input that starts with a
// byte other than 0 is a DB file as it is (the seeds: DBs attnc-tune wrote);
// one that starts with 0 drives a JSON writer instead, whose steps open and
// close arrays and objects (once or repeated up to 2^17 times), write keys
// and values of the DB's schema, numbers of every kind and raw bytes, up to
// 16 MiB: the sizes and depths a hostile file has, which byte mutations of
// small seeds do not reach.
//
// A DB that loads is saved, loaded again (it must hold the same entries and
// candidates, or the fuzzer aborts: a finding), merged with itself, and
// asked for the schedule of a kernel as attnc would.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "FuzzFiles.h"
#include "attnc/Autotune/TuningDb.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace attnc;

namespace {

constexpr size_t kMaxText = 16 << 20;

const char *const kKeys[] = {"format", "version", "entries", "spec_hash", "kernel", "target",
                             "cpu", "shape", "measured", "candidates", "backend", "schedule",
                             "status", "detail", "median_ms", "spread_pct", "default_ms",
                             "speedup", "rounds", "object", "key", ""};
const char *const kValues[] = {"\"attnc-tuning-db\"", "1", "\"ok\"", "\"wrong\"", "\"crashed\"",
                               "\"mlir\"", "\"halide\"", "\"x86-64-avx2\"", "\"q64-kv64\"",
                               "\"block_q=64,block_kv=32\"", "\"0123456789abcdef\"", "\"small\"",
                               "0", "-1", "1e308", "1e309", "-0.0", "9223372036854775808",
                               "null", "true", "\"\\u0000\"", "\"\\ud800\"", "\"a\\\"b\""};

/// Writes JSON (mostly) as the bytes direct.
class JsonWriter {
public:
  explicit JsonWriter(FuzzedDataProvider &in) : in(in) {}

  std::string write() {
    while (in.remaining_bytes() && text.size() < kMaxText)
      step();
    if (in.ConsumeBool()) // else left truncated
      while (!open.empty())
        close();
    return std::move(text);
  }

private:
  void step() {
    switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return openN('[', 1);
    case 1: return openN('{', 1);
    case 2: return openN(in.ConsumeBool() ? '[' : '{', in.ConsumeIntegralInRange(2, 1 << 17));
    case 3: return value(in.PickValueInArray(kValues));
    case 4: return value(std::to_string(in.ConsumeIntegral<int64_t>()));
    case 5: return value(std::to_string(in.ConsumeFloatingPoint<double>()));
    case 6: return text += in.ConsumeBytesAsString(in.ConsumeIntegralInRange(1, 8)), void();
    default: return open.empty() ? void() : close();
    }
  }

  /// Before a value: the comma, and the key inside an object.
  void separate() {
    if (open.empty())
      return;
    if (!first.back())
      text += ',';
    first.back() = false;
    if (open.back() == '{')
      text += std::string("\"") + in.PickValueInArray(kKeys) + "\":";
  }
  void value(const std::string &v) {
    separate();
    text += v;
  }
  void openN(char bracket, int n) {
    for (int i = 0; i < n && text.size() < kMaxText; ++i) {
      separate();
      text += bracket;
      open.push_back(bracket);
      first.push_back(true);
    }
  }
  void close() {
    text += open.back() == '[' ? ']' : '}';
    open.pop_back();
    first.pop_back();
  }

  FuzzedDataProvider &in;
  std::string text;
  std::vector<char> open;
  std::vector<bool> first;
};

size_t candidates(const TuningDb &db) {
  size_t n = 0;
  for (const TuningEntry &e : db.entries)
    n += e.candidates.size();
  return n;
}

[[noreturn]] void finding(const char *what, size_t before, size_t after) {
  std::fprintf(stderr, "attnc-tuning-db-fuzzer: %s: %zu before saving, %zu after\n", what,
               before, after);
  std::abort();
}

mlir::attn::KernelOp smallKernel() {
  static mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(
      "attn.kernel @small { attn.attention {num_heads = 2, head_dim = 32, dtype = f32, "
      "layout = bshd, mask = #attn.causal<top_left>, outputs = [out, lse]} }",
      &fuzz::context(/*dropDiagnostics=*/false));
  return *module->getOps<mlir::attn::KernelOp>().begin();
}

/// What a DB that loaded goes through: save and load again, merge, choose.
void use(TuningDb &db) {
  std::string again = fuzz::writeTempFile("again.json", "");
  if (llvm::Error err = db.save(again)) {
    llvm::consumeError(std::move(err));
    return;
  }
  llvm::Expected<TuningDb> reread = TuningDb::load(again);
  if (!reread) {
    std::fprintf(stderr, "%s\n", llvm::toString(reread.takeError()).c_str());
    finding("a saved DB does not load", db.entries.size(), 0);
  }
  if (reread->entries.size() != db.entries.size())
    finding("entries", db.entries.size(), reread->entries.size());
  if (candidates(*reread) != candidates(db))
    finding("candidates", candidates(db), candidates(*reread));
  db.merge(*reread);
  for (const char *backend : {"", "mlir", "halide"})
    (void)chooseTuning(db, smallKernel(), "x86-64-avx2", backend);
}

} // namespace

extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text;
  if (size > 0 && data[0] == 0) {
    FuzzedDataProvider in(data + 1, size - 1);
    text = JsonWriter(in).write();
  } else {
    text.assign(reinterpret_cast<const char *>(data), size);
  }
  llvm::Expected<TuningDb> db = TuningDb::load(fuzz::writeTempFile("db.json", text));
  if (!db) {
    llvm::consumeError(db.takeError());
    return 0;
  }
  use(*db);
  return 0;
}
