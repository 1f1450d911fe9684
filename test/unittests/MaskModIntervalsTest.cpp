//===- MaskModIntervalsTest.cpp - soundness of the mask_mod tile analysis -===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// classifyMaskModTile against per-element evaluation (the reference's
// ModInterpreter): the masks users write (documents, prefix-LM, blocks,
// windows) get the verdicts they should, and thousands of random mask_mods
// (compositions of the integer ops the analysis follows, on index, i32 and
// i1, with constants that make some divisions by zero) over random tiles
// never get "always" or "never" where an element disagrees or traps; with
// loads of input tensors too (document-like ids, a value per head), decided
// from the tensors' values over each tile, as the kernels do at run time.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/ModInterpreter.h"
#include "attnc/Transforms/MaskModIntervals.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace mlir;
using namespace attnc;

namespace {

class MaskModIntervals : public ::testing::Test {
protected:
  MaskModIntervals() {
    context.loadDialect<attn::AttnDialect, arith::ArithDialect, math::MathDialect>();
  }

  /// The mask_mod region of a spec whose body is `body` (ops on %b, %h, %q,
  /// %kv, ending in `attn.yield %keep : i1`).
  Region &parse(const std::string &body) {
    std::string text = "attn.kernel @k {\n"
                       "  attn.attention {num_heads = 8, num_kv_heads = 8, head_dim = 64,\n"
                       "    dtype = f32, layout = bhsd, mask = #attn.full, outputs = [out],\n"
                       "    inputs = [ids: i32 [4, 1024], per_head: i32 [8]]}\n"
                       "    mask_mod {\n"
                       "    ^bb0(%b: index, %h: index, %q: index, %kv: index):\n" +
                       body + "    }\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      ADD_FAILURE() << "does not parse:\n" << text;
    attn::AttentionOp op;
    module->walk([&](attn::AttentionOp found) { op = found; });
    return op.getMaskMod();
  }

  /// Every element of the tile: (all kept, none kept, any trapped).
  struct Elements {
    bool all = true, none = true, trapped = false;
  };
  /// The inputs' values: ids [4, 1024] in runs (documents), per_head [8].
  struct Tensors {
    std::vector<int32_t> ids, perHead;
    explicit Tensors(std::mt19937 &rng) : ids(4 * 1024), perHead(8) {
      for (int b = 0; b < 4; ++b) {
        int id = 0;
        for (int t = 0; t < 1024; ++t) {
          id += std::uniform_int_distribution<int>(0, 99)(rng) == 0;
          ids[b * 1024 + t] = id;
        }
      }
      for (int32_t &v : perHead)
        v = std::uniform_int_distribution<int>(0, 20)(rng);
    }
    /// The element at `at`, or none outside the input.
    std::optional<int32_t> at(llvm::StringRef name, llvm::ArrayRef<int64_t> index) const {
      bool isIds = name == "ids";
      if (index.size() != (isIds ? 2u : 1u) || index[0] < 0 || index[0] >= (isIds ? 4 : 8) ||
          (isIds && (index[1] < 0 || index[1] >= 1024)))
        return std::nullopt;
      return isIds ? ids[index[0] * 1024 + index[1]] : perHead[index[0]];
    }
    /// What classifyMaskModTile reads: the least and greatest over a box.
    LoadValuesFn values() const {
      return [this](llvm::StringRef name,
                    llvm::ArrayRef<IndexRange> box) -> std::optional<IndexRange> {
        IndexRange r{INT64_MAX, INT64_MIN};
        int64_t jLo = box.size() > 1 ? box[1].lo : 0, jHi = box.size() > 1 ? box[1].hi : 0;
        for (int64_t i = box[0].lo; i <= box[0].hi; ++i)
          for (int64_t j = jLo; j <= jHi; ++j) {
            std::optional<int32_t> v =
                box.size() > 1 ? at(name, {i, j}) : at(name, llvm::ArrayRef<int64_t>{i});
            if (!v)
              return std::nullopt;
            r = {std::min<int64_t>(r.lo, *v), std::max<int64_t>(r.hi, *v)};
          }
        return r;
      };
    }
  };

  static Elements evaluate(Region &region, int64_t b, int64_t h, IndexRange q,
                           IndexRange kv, const Tensors *tensors = nullptr) {
    ModInterpreter interpreter(region);
    if (tensors)
      interpreter.setLoader([tensors](llvm::StringRef name, llvm::ArrayRef<int64_t> index)
                                -> llvm::Expected<Scalar> {
        if (std::optional<int32_t> v = tensors->at(name, index))
          return Scalar::ofInt(llvm::APInt(32, uint64_t(int64_t(*v)), /*isSigned=*/true));
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "outside the input");
      });
    Elements e;
    for (int64_t i = q.lo; i <= q.hi; ++i)
      for (int64_t j = kv.lo; j <= kv.hi; ++j) {
        auto kept = interpreter.run({Scalar::ofIndex(b), Scalar::ofIndex(h),
                                     Scalar::ofIndex(i), Scalar::ofIndex(j)});
        if (!kept) {
          llvm::consumeError(kept.takeError());
          e.trapped = true;
          continue;
        }
        bool keep = !kept->i.isZero();
        e.all &= keep;
        e.none &= !keep;
      }
    return e;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

const char *kDocuments = R"(
      %len = arith.constant 512 : index
      %dq = arith.divui %q, %len : index
      %dk = arith.divui %kv, %len : index
      %keep = arith.cmpi eq, %dq, %dk : index
      attn.yield %keep : i1
)";

TEST_F(MaskModIntervals, DocumentsOfFixedLength) {
  Region &r = parse(kDocuments);
  auto tile = [&](int64_t q0, int64_t k0) {
    return classifyMaskModTile(r, IndexRange::point(0), IndexRange::point(3),
                               IndexRange::span(q0, q0 + 64), IndexRange::span(k0, k0 + 64));
  };
  EXPECT_EQ(tile(0, 448), TileVerdict::Always);    // one document
  EXPECT_EQ(tile(0, 512), TileVerdict::Never);     // the next one
  EXPECT_EQ(tile(480, 480), TileVerdict::Unknown); // across a boundary
}

TEST_F(MaskModIntervals, PrefixLmAndBlocks) {
  // Prefix-LM: the first 100 keys for everyone, causal after.
  Region &prefix = parse(R"(
      %n = arith.constant 100 : index
      %inPrefix = arith.cmpi slt, %kv, %n : index
      %causal = arith.cmpi sge, %q, %kv : index
      %keep = arith.ori %inPrefix, %causal : i1
      attn.yield %keep : i1
)");
  auto at = [&](Region &r, int64_t q0, int64_t k0) {
    return classifyMaskModTile(r, IndexRange::point(1), IndexRange::point(0),
                               IndexRange::span(q0, q0 + 32), IndexRange::span(k0, k0 + 32));
  };
  EXPECT_EQ(at(prefix, 0, 32), TileVerdict::Always);   // all in the prefix
  EXPECT_EQ(at(prefix, 256, 128), TileVerdict::Always); // below the diagonal
  EXPECT_EQ(at(prefix, 128, 256), TileVerdict::Never);  // above it, past the prefix
  EXPECT_EQ(at(prefix, 96, 96), TileVerdict::Unknown);  // on it
  // Blocks of 64 by remainder: a tile inside one period keeps its order.
  Region &blocks = parse(R"(
      %c = arith.constant 64 : index
      %r = arith.remui %kv, %c : index
      %c16 = arith.constant 16 : index
      %keep = arith.cmpi ult, %r, %c16 : index
      attn.yield %keep : i1
)");
  auto cols = [&](int64_t k0, int64_t k1) {
    return classifyMaskModTile(blocks, IndexRange::point(0), IndexRange::point(0),
                               IndexRange::span(0, 16), IndexRange::span(k0, k1));
  };
  EXPECT_EQ(cols(128, 144), TileVerdict::Always);
  EXPECT_EQ(cols(144, 192), TileVerdict::Never);
  EXPECT_EQ(cols(120, 136), TileVerdict::Unknown);
}

TEST_F(MaskModIntervals, ADivisionThatMayTrapIsUnknown) {
  // kv - 100 is 0 inside the tile: per-element evaluation fails there, so the
  // tile is not skipped even though every other element is kept.
  Region &r = parse(R"(
      %c = arith.constant 100 : index
      %d = arith.subi %kv, %c : index
      %x = arith.divsi %q, %d : index
      %big = arith.constant 1000000 : index
      %keep = arith.cmpi slt, %x, %big : index
      attn.yield %keep : i1
)");
  EXPECT_EQ(classifyMaskModTile(r, IndexRange::point(0), IndexRange::point(0),
                                IndexRange::span(0, 8), IndexRange::span(96, 104)),
            TileVerdict::Unknown);
  EXPECT_EQ(classifyMaskModTile(r, IndexRange::point(0), IndexRange::point(0),
                                IndexRange::span(0, 8), IndexRange::span(200, 208)),
            TileVerdict::Always);
}

/// A random mask_mod: `steps` ops over the arguments, constants and the
/// values made so far, of index, i32 and i1, yielding an i1.
class Generator {
public:
  explicit Generator(unsigned seed, bool loads = false) : rng(seed), loads(loads) {}

  /// The body; its yield depends on q or kv (the last such i1, else a
  /// comparison of q or kv with another value).
  std::string body(int steps) {
    text.clear();
    values = {{"%b", "index", false}, {"%h", "index", false}, {"%q", "index", true},
              {"%kv", "index", true}};
    counter = 0;
    for (int s = 0; s < steps; ++s)
      step();
    std::string keep;
    for (auto &v : values)
      if (v.type == "i1" && v.dep)
        keep = v.name;
    if (keep.empty())
      keep = emit("arith.cmpi " + predicate() + ", " + (uniform(0, 1) ? "%q" : "%kv") +
                      ", " + pick("index") + " : index",
                  "i1");
    return text + "      attn.yield " + keep + " : i1\n";
  }

private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  /// A new value `rhs` of `type`; it depends on q or kv when an operand does.
  std::string emit(const std::string &rhs, const std::string &type) {
    std::string name = "%v" + std::to_string(counter++);
    bool dep = false;
    for (auto &v : values)
      dep |= v.dep && (rhs.find(v.name + ",") != std::string::npos ||
                       rhs.find(v.name + " ") != std::string::npos);
    text += "      " + name + " = " + rhs + "\n";
    values.push_back({name, type, dep});
    return name;
  }

  std::string constant(const std::string &type) {
    static const int kValues[] = {0, 1, 2, 3, 7, 16, 64, 100, 128, 512, -1, -5, -64};
    // Small ones often: comparisons against them land on a tile's edges.
    int v = type == "i1" ? uniform(0, 1)
                         : uniform(0, 1) ? kValues[uniform(0, 12)] : uniform(-24, 40);
    if (type == "i1")
      return emit(std::string("arith.constant ") + (v ? "true" : "false"), type);
    return emit("arith.constant " + std::to_string(v) + " : " + type, type);
  }

  /// A value of `type`: an earlier one, or a new constant (empty for i1
  /// when none exists and `type` is i1, so that callers make one).
  std::string pick(const std::string &type) {
    std::vector<std::string> of;
    for (auto &v : values)
      if (v.type == type)
        of.push_back(v.name);
    if (of.empty() || uniform(0, 5) == 0)
      return type == "i1" && of.empty() ? "" : constant(type);
    return of[uniform(0, of.size() - 1)];
  }

  /// An index value that is no constant (a constant outside an input of
  /// static extent is a verifier error, not a run-time one).
  std::string index() {
    std::vector<std::string> of;
    for (auto &v : values)
      if (v.type == "index" && text.find(v.name + " = arith.constant") == std::string::npos)
        of.push_back(v.name);
    return of[uniform(0, of.size() - 1)];
  }

  std::string predicate() {
    static const char *kPreds[] = {"eq", "ne", "slt", "sle", "sgt", "sge",
                                   "ult", "ule", "ugt", "uge"};
    return kPreds[uniform(0, 9)];
  }

  void step() {
    static const char *kBinary[] = {"addi", "subi", "muli", "divsi", "divui", "remsi",
                                    "remui", "floordivsi", "ceildivsi", "maxsi", "minsi",
                                    "maxui", "minui", "andi", "ori", "xori"};
    std::string type = uniform(0, 3) == 0 ? "i32" : "index";
    if (loads && uniform(0, 3) == 0) { // an input's element, at values of the body
      if (uniform(0, 2))
        emit("attn.load @ids[" + index() + ", " + index() + " ] : i32", "i32");
      else
        emit("attn.load @per_head[" + index() + " ] : i32", "i32");
      return;
    }
    switch (uniform(0, 6)) {
    case 0:
    case 1:
    case 2: {
      std::string a = pick(type), b = pick(type);
      emit(llvm::formatv("arith.{0} {1}, {2} : {3}", kBinary[uniform(0, 15)], a, b, type),
           type);
      return;
    }
    case 3: { // a comparison, of i1 values too (signed, true is -1)
      if (uniform(0, 4) == 0)
        type = "i1";
      std::string a = pick(type), b = pick(type);
      if (a.empty() || b.empty())
        return;
      emit("arith.cmpi " + predicate() + ", " + a + ", " + b + " : " + type, "i1");
      return;
    }
    case 4: { // logic on i1
      std::string a = pick("i1"), b = pick("i1");
      if (a.empty() || b.empty())
        return;
      static const char *kLogic[] = {"andi", "ori", "xori"};
      emit(llvm::formatv("arith.{0} {1}, {2} : i1", kLogic[uniform(0, 2)], a, b), "i1");
      return;
    }
    case 5: { // select
      std::string c = pick("i1");
      if (c.empty())
        return;
      std::string a = pick(type), b = pick(type);
      emit("arith.select " + c + ", " + a + ", " + b + " : " + type, type);
      return;
    }
    default:
      cast();
    }
  }

  void cast() {
    switch (uniform(0, 4)) {
    case 0:
      emit("arith.index_cast " + pick("index") + " : index to i32", "i32");
      return;
    case 1:
      emit("arith.index_cast " + pick("i32") + " : i32 to index", "index");
      return;
    case 2:
      emit("arith.index_castui " + pick("i32") + " : i32 to index", "index");
      return;
    case 3:
      if (std::string c = pick("i1"); !c.empty())
        emit((uniform(0, 1) ? "arith.extui " : "arith.extsi ") + c + " : i1 to i32", "i32");
      return;
    default:
      emit("arith.trunci " + pick("i32") + " : i32 to i1", "i1");
    }
  }

  std::mt19937 rng;
  bool loads;
  std::string text;
  struct Named {
    std::string name, type;
    bool dep; // depends on q or kv
  };
  std::vector<Named> values;
  int counter = 0;
};

TEST_F(MaskModIntervals, RandomMaskModsAreNeverMisclassified) {
  Generator gen(2026);
  std::mt19937 rng(12);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int kMods = 3000, kTilesPerMod = 4;
  int decided = 0, always = 0, never = 0;
  for (int m = 0; m < kMods; ++m) {
    std::string body = gen.body(uniform(2, 9));
    Region &region = parse(body);
    for (int t = 0; t < kTilesPerMod; ++t) {
      static const int kSizes[] = {1, 2, 5, 8, 16};
      int64_t b = uniform(0, 3), h = uniform(0, 7);
      int64_t q0 = uniform(0, 700), k0 = uniform(0, 700);
      IndexRange q = IndexRange::span(q0, q0 + kSizes[uniform(0, 4)]);
      IndexRange kv = IndexRange::span(k0, k0 + kSizes[uniform(0, 4)]);
      TileVerdict verdict =
          classifyMaskModTile(region, IndexRange::point(b), IndexRange::point(h), q, kv);
      if (verdict == TileVerdict::Unknown)
        continue; // never wrong
      ++decided;
      Elements e = evaluate(region, b, h, q, kv);
      bool ok = !e.trapped && (verdict == TileVerdict::Always ? e.all : e.none);
      (verdict == TileVerdict::Always ? always : never) += 1;
      ASSERT_TRUE(ok) << (verdict == TileVerdict::Always ? "always" : "never")
                      << " but the elements disagree" << (e.trapped ? " (one traps)" : "")
                      << "; b " << b << ", h " << h << ", q [" << q.lo << ", " << q.hi
                      << "], kv [" << kv.lo << ", " << kv.hi << "]:\n"
                      << body;
    }
  }
  // The analysis decides a good share of the tiles (else this test would check
  // nothing): printed for the log, bounded below.
  std::printf("%d of %d tiles decided (%d always, %d never)\n", decided,
              kMods * kTilesPerMod, always, never);
  EXPECT_GT(always, kMods / 10);
  EXPECT_GT(never, kMods / 10);
}

// The same with loads of input tensors: a tile is decided from the values
// the loads read over it (never where a load may leave its input), and no
// decided tile disagrees with the elements, which read the same tensors.
TEST_F(MaskModIntervals, RandomMaskModsWithLoadsAreNeverMisclassified) {
  Generator gen(39, /*loads=*/true);
  std::mt19937 rng(40);
  Tensors tensors(rng);
  LoadValuesFn values = tensors.values();
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int kMods = 3000, kTilesPerMod = 4;
  int decided = 0, always = 0, never = 0, reading = 0;
  int fromValues = 0; // decided only with the inputs' values
  for (int m = 0; m < kMods; ++m) {
    std::string body = gen.body(uniform(2, 9));
    Region &region = parse(body);
    bool loads = body.find("attn.load") != std::string::npos;
    reading += loads;
    for (int t = 0; t < kTilesPerMod; ++t) {
      static const int kSizes[] = {1, 2, 5, 8, 16, 64};
      int64_t b = uniform(0, 3), h = uniform(0, 7);
      int64_t q0 = uniform(0, 900), k0 = uniform(0, 900);
      IndexRange q = IndexRange::span(q0, q0 + kSizes[uniform(0, 5)]);
      IndexRange kv = IndexRange::span(k0, k0 + kSizes[uniform(0, 5)]);
      TileVerdict verdict = classifyMaskModTile(region, IndexRange::point(b),
                                                IndexRange::point(h), q, kv, values);
      if (verdict == TileVerdict::Unknown || !loads)
        continue; // never wrong; bodies without loads: the test above
      ++decided;
      fromValues += classifyMaskModTile(region, IndexRange::point(b), IndexRange::point(h), q,
                                        kv) == TileVerdict::Unknown;
      Elements e = evaluate(region, b, h, q, kv, &tensors);
      bool ok = !e.trapped && (verdict == TileVerdict::Always ? e.all : e.none);
      (verdict == TileVerdict::Always ? always : never) += 1;
      ASSERT_TRUE(ok) << (verdict == TileVerdict::Always ? "always" : "never")
                      << " but the elements disagree" << (e.trapped ? " (one traps)" : "")
                      << "; b " << b << ", h " << h << ", q [" << q.lo << ", " << q.hi
                      << "], kv [" << kv.lo << ", " << kv.hi << "]:\n"
                      << body;
    }
  }
  std::printf("%d bodies read inputs; %d of their tiles decided (%d always, %d never), %d "
              "of them only from the inputs' values\n",
              reading, decided, always, never, fromValues);
  EXPECT_GT(fromValues, kMods / 20);
  EXPECT_GT(reading, kMods / 2);
  EXPECT_GT(always, kMods / 20);
  EXPECT_GT(never, kMods / 20);
}

} // namespace
