//===- IRDigestTest.cpp - the digest that decides which kernels share code ===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Kernels whose tile functions have the same digest share one compiled tile
// (SharedTiles), so a digest that missed a difference would run one kernel's
// code for another. Each test changes one thing the digest must see, or
// something it must not (names, locations, the context).
//
//===----------------------------------------------------------------------===//

#include "../../lib/Target/IRDigest.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// The digest of `text`'s first function, parsed in a context of its own.
std::string digestOf(llvm::StringRef text) {
  MLIRContext context;
  context.loadDialect<arith::ArithDialect, cf::ControlFlowDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  EXPECT_TRUE(module) << text.str();
  if (!module)
    return "";
  return attnc::irDigest(&*module->getBody()->begin());
}

constexpr const char *kBase = R"mlir(
func.func @f(%a: f32, %b: f32, %c: i1) -> f32 {
  %s = arith.subf %a, %b fastmath<fast> : f32
  cf.cond_br %c, ^bb1(%s : f32), ^bb2
^bb1(%x: f32):
  return %x : f32
^bb2:
  %one = arith.constant 1.0 : f32
  return %one : f32
}
)mlir";

/// kBase with every `from` replaced by `to`.
std::string with(llvm::StringRef from, llvm::StringRef to) {
  std::string text = kBase;
  EXPECT_NE(text.find(from.str()), std::string::npos) << from.str();
  for (size_t at = 0; (at = text.find(from.str(), at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to.str());
  return text;
}

TEST(IRDigest, SameIRInTwoContextsAgrees) {
  EXPECT_EQ(digestOf(kBase), digestOf(kBase));
  EXPECT_EQ(digestOf(kBase).size(), 40u);
}

TEST(IRDigest, IgnoresValueNamesAndLocations) {
  EXPECT_EQ(digestOf(kBase), digestOf(with("%s", "%renamed")));
  EXPECT_EQ(digestOf(kBase), digestOf(with("return %one : f32", "return %one : f32 loc(\"x\":3:4)")));
}

TEST(IRDigest, SeesOperandOrder) {
  EXPECT_NE(digestOf(kBase), digestOf(with("arith.subf %a, %b", "arith.subf %b, %a")));
}

TEST(IRDigest, SeesInherentAttributes) {
  EXPECT_NE(digestOf(kBase), digestOf(with("fastmath<fast>", "fastmath<contract>")));
  EXPECT_NE(digestOf(kBase), digestOf(with("arith.constant 1.0", "arith.constant 2.0")));
}

TEST(IRDigest, SeesDiscardableAttributes) {
  EXPECT_NE(digestOf(kBase),
            digestOf(with("%one = arith.constant 1.0 : f32",
                          "%one = arith.constant {note = 1 : i32} 1.0 : f32")));
}

TEST(IRDigest, SeesSuccessorsAndBlockArguments) {
  EXPECT_NE(digestOf(kBase), digestOf(with("cf.cond_br %c, ^bb1(%s : f32), ^bb2",
                                           "cf.cond_br %c, ^bb1(%a : f32), ^bb2")));
  EXPECT_NE(digestOf(kBase), digestOf(with("cf.cond_br %c, ^bb1(%s : f32), ^bb2",
                                           "cf.cond_br %c, ^bb2, ^bb1(%s : f32)")));
}

TEST(IRDigest, SeesTypesAndTheSymbolName) {
  EXPECT_NE(digestOf(kBase), digestOf(with("%c: i1", "%c: i1, %d: i8")));
  // The function's own name is one of its properties: a caller that wants it
  // left out (SharedTiles) renames the function first.
  EXPECT_NE(digestOf(kBase), digestOf(with("@f(", "@g(")));
}

TEST(IRDigest, NoDigestForValuesFromOutside) {
  MLIRContext context;
  context.loadDialect<arith::ArithDialect, cf::ControlFlowDialect, func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kBase, &context);
  ASSERT_TRUE(module);
  // The subtraction alone uses the function's arguments: no digest.
  auto fn = cast<func::FuncOp>(&*module->getBody()->begin());
  EXPECT_EQ(attnc::irDigest(&fn.getBody().front().front()), "");
}

} // namespace
