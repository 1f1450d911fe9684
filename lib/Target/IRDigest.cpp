//===- IRDigest.cpp - a digest of IR that any context computes alike ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The IR is serialized into a buffer that decodes back to its structure (every
// list carries its length, every text its size) and the buffer is hashed.
// Values and blocks are numbered in the order the printer would name them;
// an attribute or a type is written as its ordinal among the distinct ones
// seen so far, followed by its printed text the first time it appears.
//
//===----------------------------------------------------------------------===//

#include "IRDigest.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA1.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

class Digest {
public:
  std::string of(Operation *root) {
    number(root);
    add(root);
    if (!closed)
      return "";
    return llvm::toHex(llvm::SHA1::hash(llvm::arrayRefFromStringRef(buffer)));
  }

private:
  std::string buffer;
  llvm::DenseMap<Value, uint64_t> values;
  llvm::DenseMap<Block *, uint64_t> blocks;
  llvm::DenseMap<const void *, uint64_t> printed; // attributes and types
  bool closed = true;

  /// Values and blocks, in the printer's order.
  void number(Operation *op) {
    for (Value result : op->getResults())
      values.try_emplace(result, values.size());
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        blocks.try_emplace(&block, blocks.size());
        for (Value arg : block.getArguments())
          values.try_emplace(arg, values.size());
        for (Operation &nested : block)
          number(&nested);
      }
  }

  void addNumber(uint64_t n) { buffer.append(reinterpret_cast<const char *>(&n), sizeof n); }

  void addText(llvm::StringRef text) {
    addNumber(text.size());
    buffer.append(text);
  }

  /// An attribute or type (null: ~0): its ordinal, and its text when new.
  template <typename T> void addPrinted(T entity) {
    if (!entity)
      return addNumber(~uint64_t(0));
    auto [it, fresh] = printed.try_emplace(entity.getAsOpaquePointer(), printed.size());
    addNumber(it->second);
    if (!fresh)
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    entity.print(os);
    addText(text);
  }

  void addValue(Value value) {
    auto it = values.find(value);
    closed &= it != values.end();
    addNumber(it == values.end() ? 0 : it->second);
  }

  void add(Operation *op) {
    addText(op->getName().getStringRef());
    // Properties hold the inherent attributes of most ops (and non-attribute
    // data); the dictionary, the discardable ones and every attribute of an
    // op without properties.
    addPrinted(op->getPropertiesAsAttribute());
    addPrinted(op->getRawDictionaryAttrs());
    addNumber(op->getNumOperands());
    for (Value operand : op->getOperands())
      addValue(operand);
    addNumber(op->getNumResults());
    for (Type type : op->getResultTypes())
      addPrinted(type);
    addNumber(op->getNumSuccessors());
    for (Block *successor : op->getSuccessors())
      addNumber(blocks.lookup(successor));
    addNumber(op->getNumRegions());
    for (Region &region : op->getRegions()) {
      addNumber(region.getBlocks().size());
      for (Block &block : region) {
        addNumber(block.getNumArguments());
        for (Type type : block.getArgumentTypes())
          addPrinted(type);
        addNumber(block.getOperations().size());
        for (Operation &nested : block)
          add(&nested);
      }
    }
  }
};

} // namespace

std::string attnc::irDigest(Operation *op) { return Digest().of(op); }
