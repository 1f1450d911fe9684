//===- SpecWriter.cpp - valid specs from a fuzzer's bytes -----------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "SpecWriter.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

namespace {

/// Writes one valid spec from the fuzzer's bytes.
class SpecWriter {
public:
  explicit SpecWriter(FuzzedDataProvider &in) : in(in) {}

  std::string spec(int64_t &headDim, bool &decode) {
    int64_t kvHeads = in.ConsumeIntegralInRange<int64_t>(1, 3);
    int64_t heads = kvHeads * in.ConsumeIntegralInRange<int64_t>(1, 3);
    headDim = in.ConsumeIntegralInRange<int64_t>(1, 80);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "attn.kernel @k {\n  attn.attention {num_heads = " << heads
       << ", num_kv_heads = " << kvHeads << ", head_dim = " << headDim
       << ", dtype = " << pick({"f32", "f16", "bf16"})
       << ", layout = " << pick({"bhsd", "bshd"}) << ", mask = " << mask(2);
    if (in.ConsumeIntegralInRange(0, 3) == 0)
      os << ", scale = " << llvm::formatv("{0:f3}", in.ConsumeFloatingPointInRange(0.01, 1.0));
    os << ", outputs = " << pick({"[out]", "[out, lse]", "[lse, out]"});
    decode = in.ConsumeIntegralInRange(0, 3) == 3; // not when the bytes ran out
    if (decode)
      os << ", num_splits = " << small(9);
    os << "}\n";
    os << scoreMod() << maskMod() << "}\n";
    return text;
  }

private:
  std::string pick(std::initializer_list<const char *> choices) {
    return *(choices.begin() + in.ConsumeIntegralInRange<size_t>(0, choices.size() - 1));
  }
  int64_t small(int64_t hi) { return in.ConsumeIntegralInRange<int64_t>(0, hi); }
  std::string bound(int64_t hi) {
    return in.ConsumeIntegralInRange(0, 4) == 0 ? "inf" : std::to_string(small(hi));
  }

  std::string mask(int depth) {
    switch (in.ConsumeIntegralInRange(0, depth > 0 ? 7 : 5)) {
    case 0:
      return "#attn.full";
    case 1:
      return "#attn.causal<" + pick({"top_left", "bottom_right"}) + ">";
    case 2:
      return "#attn.sliding_window<left = " + bound(40) + ", right = " + bound(40) +
             pick({"", ", align = bottom_right"}) + ">";
    case 3:
      return blockSparse();
    case 4:
      return llvm::formatv("#attn.longformer<block = {0}, window = {1}, global = [{2}]>",
                           1 + small(24), small(2), small(3));
    case 5:
      return llvm::formatv(
          "#attn.bigbird<block = {0}, window = {1}, global = {2}, random = {3}, seed = {4}>",
          1 + small(24), small(2), small(2), small(3), in.ConsumeIntegral<uint32_t>());
    default: {
      std::string parts = mask(depth - 1) + ", " + mask(depth - 1);
      if (in.ConsumeBool())
        parts += ", " + mask(depth - 1);
      return "#attn." + pick({"and", "or"}) + "<[" + parts + "]>";
    }
    }
  }

  std::string blockSparse() {
    int64_t rows = 1 + small(4), cols = 1 + small(4);
    std::string layout;
    for (int64_t r = 0; r < rows; ++r) {
      layout += r ? ", [" : "[";
      for (int64_t c = 0; c < cols; ++c)
        layout += std::string(c ? ", " : "") + (in.ConsumeBool() ? "1" : "0");
      layout += "]";
    }
    return llvm::formatv("#attn.block_sparse<block = [{0}, {1}], layout = [{2}]>",
                         1 + small(24), 1 + small(24), layout);
  }

  std::string scoreMod() {
    static const char *head = "    score_mod {\n    ^bb0(%s: f32, %b: index, %h: index, "
                              "%q: index, %kv: index):\n";
    switch (in.ConsumeIntegralInRange(0, 3)) {
    case 1: // soft-capping
      return std::string(head) +
             llvm::formatv("      %cap = arith.constant {0:f1} : f32\n", 1.0 + small(40)).str() +
             "      %x = arith.divf %s, %cap : f32\n      %t = math.tanh %x : f32\n"
             "      %r = arith.mulf %t, %cap : f32\n      attn.yield %r : f32\n    }\n";
    case 2: // ALiBi-like: a per-head slope times (kv - q)
      return std::string(head) +
             "      %c1 = arith.constant 1 : index\n      %h1 = arith.addi %h, %c1 : index\n"
             "      %hi = arith.index_cast %h1 : index to i64\n"
             "      %hf = arith.sitofp %hi : i64 to f32\n"
             "      %m = arith.constant -0.5 : f32\n      %e = arith.mulf %hf, %m : f32\n"
             "      %slope = math.exp2 %e : f32\n"
             "      %qi = arith.index_cast %q : index to i64\n"
             "      %ki = arith.index_cast %kv : index to i64\n"
             "      %d = arith.subi %ki, %qi : i64\n      %df = arith.sitofp %d : i64 to f32\n"
             "      %bias = arith.mulf %slope, %df : f32\n"
             "      %r = arith.addf %s, %bias : f32\n      attn.yield %r : f32\n    }\n";
    case 3: // a batch-dependent bias
      return std::string(head) + "      %bi = arith.index_cast %b : index to i64\n"
                                 "      %bf = arith.sitofp %bi : i64 to f32\n"
                                 "      %r = arith.subf %s, %bf : f32\n      attn.yield %r : f32\n"
                                 "    }\n";
    default:
      return "";
    }
  }

  std::string maskMod() {
    static const char *head =
        "    mask_mod {\n    ^bb0(%b: index, %h: index, %q: index, %kv: index):\n";
    switch (in.ConsumeIntegralInRange(0, 2)) {
    case 1: // documents of a fixed length
      return std::string(head) +
             llvm::formatv("      %len = arith.constant {0} : index\n", 1 + small(30)).str() +
             "      %dq = arith.divui %q, %len : index\n      %dk = arith.divui %kv, %len : index\n"
             "      %keep = arith.cmpi eq, %dq, %dk : index\n      attn.yield %keep : i1\n    }\n";
    case 2: // every other key for odd heads
      return std::string(head) +
             "      %c2 = arith.constant 2 : index\n      %hk = arith.addi %h, %kv : index\n"
             "      %r = arith.remui %hk, %c2 : index\n      %c0 = arith.constant 0 : index\n"
             "      %keep = arith.cmpi eq, %r, %c0 : index\n      attn.yield %keep : i1\n    }\n";
    default:
      return "";
    }
  }

  FuzzedDataProvider &in;
};

} // namespace

std::string attnc::fuzz::writeSpec(FuzzedDataProvider &in, int64_t &headDim, bool &decode) {
  return SpecWriter(in).spec(headDim, decode);
}
