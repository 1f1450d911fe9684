//===- BackwardTest.cpp - the reference backward against finite differences -===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// evaluateBackward's dq, dk, dv against central differences of the loss
// sum(d_out * out) over its own forward (double, score_mod unrounded), for
// every element of q, k and v, on small specs of every mask kind, GQA and
// score_mods whose derivative is not 1 (soft-capping's tanh, ALiBi's bias,
// a division); the gradients of f32 tables a score_mod reads, the same way;
// and its forward against evaluateReference's out.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Reference/Backward.h"
#include "attnc/Reference/ModInterpreter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>

using namespace mlir;
using namespace attnc;

namespace {

constexpr const char *kSoftcap = R"(
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %cap = arith.constant 2.0 : f32
      %x = arith.divf %score, %cap : f32
      %t = math.tanh %x : f32
      %capped = arith.mulf %t, %cap : f32
      attn.yield %capped : f32
    })";

constexpr const char *kAlibi = R"(
    score_mod {
    ^bb0(%score: f32, %b: index, %h: index, %q: index, %kv: index):
      %hi = arith.index_cast %h : index to i64
      %hf = arith.sitofp %hi : i64 to f32
      %e = math.exp2 %hf : f32
      %slope = arith.divf %score, %e : f32
      %qi = arith.index_cast %q : index to i64
      %ki = arith.index_cast %kv : index to i64
      %d = arith.subi %ki, %qi : i64
      %df = arith.sitofp %d : i64 to f32
      %c = arith.constant 0.25 : f32
      %bias = arith.mulf %c, %df : f32
      %r = arith.addf %slope, %bias : f32
      attn.yield %r : f32
    })";

struct Case {
  const char *name, *mask, *layout, *mod;
  int64_t heads, kvHeads;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.name; }

class BackwardTest : public ::testing::TestWithParam<Case> {
protected:
  attn::AttentionOp parse(const Case &c) {
    return parse(std::string("attn.kernel @k {\n  attn.attention {num_heads = ") +
                 std::to_string(c.heads) + ", num_kv_heads = " + std::to_string(c.kvHeads) +
                 ", head_dim = 8, dtype = f32, layout = " + c.layout + ", mask = " + c.mask +
                 ", outputs = [out]}" + c.mod + "\n}\n");
  }
  /// The attn.attention of a spec's text (null, and a failure, if it does
  /// not parse).
  attn::AttentionOp parse(const std::string &text) {
    context.loadDialect<attn::AttnDialect, arith::ArithDialect, math::MathDialect>();
    module = parseSourceString<ModuleOp>(text, &context);
    attn::AttentionOp op;
    if (module)
      module->walk([&](attn::AttentionOp found) { op = found; });
    EXPECT_TRUE(op) << "does not parse:\n" << text;
    return op;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

/// q, k, v and d_out of a batch of 2, 7 queries and 9 keys, seeded.
std::array<HostTensor, 4> seededTensors(attn::AttentionOp op) {
  ProblemSize size{2, 7, 9};
  HostTensor q = randomTensor(ElementType::f32, tensorShape(op, size, true), 1);
  return {q, randomTensor(ElementType::f32, tensorShape(op, size, false), 2),
          randomTensor(ElementType::f32, tensorShape(op, size, false), 3),
          randomTensor(ElementType::f32, q.shape, 4)};
}

/// sum(dOut * out) (+ sum(dLse * lse)) of the backward's own forward.
double loss(attn::AttentionOp op, const HostTensor &q, const HostTensor &k,
            const HostTensor &v, const HostTensor &dOut, const ModInputs *inputs = nullptr,
            const HostTensor *dLse = nullptr) {
  llvm::Expected<BackwardResult> r = evaluateBackward(op, q, k, v, dOut, inputs);
  if (!r) {
    ADD_FAILURE() << llvm::toString(r.takeError());
    return NAN;
  }
  double sum = 0;
  for (int64_t n = 0; n < dOut.numElements(); ++n)
    sum += dOut.data[n] * r->out.data[n];
  for (int64_t n = 0; dLse && n < dLse->numElements(); ++n)
    sum += dLse->data[n] * r->lse.data[n];
  return sum;
}

TEST_P(BackwardTest, MatchesFiniteDifferences) {
  const Case &c = GetParam();
  attn::AttentionOp op = parse(c);
  ASSERT_TRUE(op);
  auto [q, k, v, dOut] = seededTensors(op);
  llvm::Expected<BackwardResult> grads = evaluateBackward(op, q, k, v, dOut);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());

  // Its forward is the reference's (which rounds out to f32).
  llvm::Expected<ReferenceResult> ref = evaluateReference(op, q, k, v);
  ASSERT_TRUE(bool(ref)) << llvm::toString(ref.takeError());
  for (int64_t n = 0; n < q.numElements(); ++n)
    ASSERT_NEAR(grads->out.data[n], ref->out.data[n], 1e-6) << "out element " << n;

  // Every element of q, k and v: central differences, step 1e-5 (the loss is
  // smooth there and evaluated in double: the difference is good to ~1e-9).
  const double h = 1e-5, tol = 1e-7;
  int64_t nonzero = 0;
  for (auto [name, tensor, grad] :
       {std::tuple{"dq", &q, &grads->dq}, {"dk", &k, &grads->dk}, {"dv", &v, &grads->dv}}) {
    for (int64_t n = 0; n < tensor->numElements(); ++n) {
      double x = tensor->data[n];
      tensor->data[n] = x + h;
      double up = loss(op, q, k, v, dOut);
      tensor->data[n] = x - h;
      double down = loss(op, q, k, v, dOut);
      tensor->data[n] = x;
      double numeric = (up - down) / (2 * h);
      ASSERT_NEAR(grad->data[n], numeric, tol * (1 + std::fabs(numeric)))
          << name << " element " << n << " of " << c.name;
      nonzero += grad->data[n] != 0;
    }
  }
  // Not vacuous: most elements have a gradient.
  EXPECT_GT(nonzero, (q.numElements() + 2 * k.numElements()) / 2);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, BackwardTest,
    ::testing::Values(Case{"dense", "#attn.full", "bhsd", "", 2, 2},
                      Case{"causal_gqa", "#attn.causal<bottom_right>", "bshd", "", 4, 2},
                      Case{"window", "#attn.sliding_window<left = 3, right = 1>", "bhsd", "", 2, 1},
                      Case{"softcap_causal", "#attn.causal<top_left>", "bhsd", kSoftcap, 2, 2},
                      Case{"alibi_gqa", "#attn.full", "bshd", kAlibi, 4, 1}),
    [](const ::testing::TestParamInfo<Case> &info) { return std::string(info.param.name); });

/// The interpreter's forward-mode derivative of each float op a score_mod
/// may use, against a central difference of its exact value: `body` computes
/// %r from %s (the score) and %c (0.3).
TEST_F(BackwardTest, EveryFloatOpHasItsDerivative) {
  const char *bodies[] = {
      "%r = arith.addf %s, %s : f32",       "%r = arith.subf %c, %s : f32",
      "%r = arith.mulf %s, %s : f32",       "%r = arith.divf %c, %s : f32",
      "%r = arith.remf %s, %c : f32",       "%r = arith.negf %s : f32",
      "%r = arith.maximumf %s, %c : f32",   "%r = arith.minimumf %s, %c : f32",
      "%r = arith.maxnumf %c, %s : f32",    "%r = arith.minnumf %c, %s : f32",
      "%r = math.absf %s : f32",            "%r = math.exp %s : f32",
      "%r = math.exp2 %s : f32",            "%r = math.expm1 %s : f32",
      "%r = math.log %s : f32",             "%r = math.log2 %s : f32",
      "%r = math.log1p %s : f32",           "%r = math.tanh %s : f32",
      "%r = math.sqrt %s : f32",            "%r = math.rsqrt %s : f32",
      "%r = math.sin %s : f32",             "%r = math.cos %s : f32",
      "%r = math.atan %s : f32",            "%r = math.erf %s : f32",
      "%r = math.powf %s, %c : f32",        "%r = math.powf %c, %s : f32",
      "%r = math.fma %s, %s, %c : f32",     "%r = math.floor %s : f32",
      "%t = arith.cmpf olt, %s, %c : f32\n      %r = arith.select %t, %c, %s : f32",
      "%w = arith.extf %s : f32 to f64\n      %r = arith.truncf %w : f64 to f32",
  };
  for (const char *body : bodies) {
    std::string text = std::string("attn.kernel @k {\n  attn.attention {num_heads = 1, "
                                   "head_dim = 8, dtype = f32, layout = bhsd, mask = "
                                   "#attn.full, outputs = [out]}\n    score_mod {\n    "
                                   "^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: "
                                   "index):\n      %c = arith.constant 0.3 : f32\n      ") +
                       body + "\n      attn.yield %r : f32\n    }\n}\n";
    attn::AttentionOp op = parse(text);
    ASSERT_TRUE(op);
    ModInterpreter mod(op.getScoreMod());
    mod.setExact(true);
    auto at = [&](double s, double seed) {
      Scalar score = Scalar::ofFloat(s);
      score.d = seed;
      llvm::Expected<Scalar> r = mod.run({score, Scalar::ofIndex(0), Scalar::ofIndex(0),
                                          Scalar::ofIndex(0), Scalar::ofIndex(0)});
      EXPECT_TRUE(bool(r)) << body;
      return r ? *r : Scalar();
    };
    const double s = 0.7, h = 1e-6;
    double numeric = (at(s + h, 0).f - at(s - h, 0).f) / (2 * h);
    EXPECT_NEAR(at(s, 1).d, numeric, 1e-8 * (1 + std::fabs(numeric))) << body;
  }
}

// A relative-position bias table and per-head soft-cap values read from
// tensors (and an int32 table, which has no gradient).
constexpr const char *kTables = R"(
    score_mod {
    ^bb0(%s: f32, %b: index, %h: index, %q: index, %kv: index):
      %lo = arith.constant -4 : index
      %hi = arith.constant 4 : index
      %d = arith.subi %kv, %q : index
      %c = arith.maxsi %d, %lo : index
      %e = arith.minsi %c, %hi : index
      %at = arith.addi %e, %hi : index
      %bias = attn.load @bias[%h, %at] : f32
      %cap = attn.load @cap[%h] : f32
      %shift = attn.load @shift[%b] : i32
      %sf = arith.sitofp %shift : i32 to f32
      %x = arith.divf %s, %cap : f32
      %t = math.tanh %x : f32
      %y = arith.mulf %t, %cap : f32
      %z = arith.addf %y, %bias : f32
      %r = arith.addf %z, %sf : f32
      attn.yield %r : f32
    })";

TEST_F(BackwardTest, TablesMatchFiniteDifferences) {
  attn::AttentionOp op = parse(
      std::string("attn.kernel @k {\n  attn.attention {num_heads = 4, num_kv_heads = 2, "
                  "head_dim = 8, dtype = f32, layout = bshd, mask = "
                  "#attn.causal<bottom_right>, outputs = [out], inputs = [bias: f32 [heads, 9], "
                  "cap: f32 [heads], shift: i32 [batch]]}") +
      kTables + "\n}\n");
  ASSERT_TRUE(op);
  auto [q, k, v, dOut] = seededTensors(op);
  ModInputs inputs;
  inputs["bias"] = randomTensor(ElementType::f32, {4, 9}, 5);
  inputs["cap"] = HostTensor(ElementType::f32, {4});
  for (int64_t h = 0; h < 4; ++h)
    inputs["cap"].data[h] = 1.5 + 0.5 * h;
  inputs["shift"] = HostTensor(ElementType::i32, {2});
  inputs["shift"].data = {1, -2};
  llvm::Expected<BackwardResult> grads = evaluateBackward(op, q, k, v, dOut, &inputs);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());
  ASSERT_EQ(grads->dInputs.size(), 2u); // not the int32 table's
  const double h = 1e-5, tol = 1e-7;
  for (const char *name : {"bias", "cap"}) {
    HostTensor &table = inputs[name];
    const HostTensor &grad = grads->dInputs[name];
    ASSERT_EQ(grad.shape, table.shape);
    int64_t nonzero = 0;
    for (int64_t n = 0; n < table.numElements(); ++n) {
      double x = table.data[n];
      table.data[n] = x + h;
      double up = loss(op, q, k, v, dOut, &inputs);
      table.data[n] = x - h;
      double down = loss(op, q, k, v, dOut, &inputs);
      table.data[n] = x;
      double numeric = (up - down) / (2 * h);
      ASSERT_NEAR(grad.data[n], numeric, tol * (1 + std::fabs(numeric)))
          << "d" << name << " element " << n;
      nonzero += grad.data[n] != 0;
    }
    // Causal, seq_q 7 against 9 keys: distances -8..2 clamped to [-4, 4]
    // reach every column of bias but the last two.
    EXPECT_GE(nonzero, table.numElements() * 3 / 4) << name;
  }
}

// A loss through lse as well as out: q's and k's gradients gain P dlse in
// dS (v's do not change), against central differences.
TEST_F(BackwardTest, LseGradientMatchesFiniteDifferences) {
  attn::AttentionOp op =
      parse(Case{"causal_gqa", "#attn.causal<bottom_right>", "bshd", kSoftcap, 4, 2});
  ASSERT_TRUE(op);
  auto [q, k, v, dOut] = seededTensors(op);
  HostTensor dLse = randomTensor(ElementType::f32, {2, 4, 7}, 5);
  llvm::Expected<BackwardResult> grads = evaluateBackward(op, q, k, v, dOut, nullptr, &dLse);
  ASSERT_TRUE(bool(grads)) << llvm::toString(grads.takeError());
  llvm::Expected<BackwardResult> outOnly = evaluateBackward(op, q, k, v, dOut);
  ASSERT_TRUE(bool(outOnly)) << llvm::toString(outOnly.takeError());
  const double h = 1e-5, tol = 1e-7;
  for (auto [name, tensor, grad, without] :
       {std::tuple{"dq", &q, &grads->dq, &outOnly->dq}, {"dk", &k, &grads->dk, &outOnly->dk},
        {"dv", &v, &grads->dv, &outOnly->dv}}) {
    double moved = 0;
    for (int64_t n = 0; n < tensor->numElements(); ++n) {
      double x = tensor->data[n];
      tensor->data[n] = x + h;
      double up = loss(op, q, k, v, dOut, nullptr, &dLse);
      tensor->data[n] = x - h;
      double down = loss(op, q, k, v, dOut, nullptr, &dLse);
      tensor->data[n] = x;
      double numeric = (up - down) / (2 * h);
      ASSERT_NEAR(grad->data[n], numeric, tol * (1 + std::fabs(numeric)))
          << name << " element " << n;
      moved = std::max(moved, std::fabs(grad->data[n] - without->data[n]));
    }
    // dlse moves dq and dk, not dv (lse does not depend on v).
    if (std::string(name) == "dv")
      EXPECT_EQ(moved, 0.0);
    else
      EXPECT_GT(moved, 1e-3) << name;
  }
  HostTensor wrong = randomTensor(ElementType::f32, {2, 4, 6}, 5);
  llvm::Expected<BackwardResult> bad = evaluateBackward(op, q, k, v, dOut, nullptr, &wrong);
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("d_lse must have lse's shape [2, 4, 7]"),
            std::string::npos);
}

TEST_F(BackwardTest, RefusesPackedSequences) {
  attn::AttentionOp varlen =
      parse("attn.kernel @v {\n  attn.attention {num_heads = 2, head_dim = 8, dtype = f32, "
            "layout = bshd, mask = #attn.full, outputs = [out], varlen = cu_seqlens}\n}\n");
  ASSERT_TRUE(varlen);
  HostTensor t = randomTensor(ElementType::f32, {1, 4, 2, 8}, 1);
  llvm::Expected<BackwardResult> r = evaluateBackward(varlen, t, t, t, t);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("dense batches"), std::string::npos);
}

} // namespace
