//===- SharedTiles.cpp - one copy of a tile function per spec -------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A spec's kernels often differ only where the tile function does not look:
// the head counts of one GQA group size, the names. Lowering the tile
// function to LLVM, LLVM's -O3 and code generation are nearly all of a
// kernel's compile time, so a kernel whose tile function is the same IR as
// an earlier kernel's straight out of attn-lower-flash-to-cpu (the lowered
// stage, a few per cent of the time) calls that one instead: its own is
// replaced by a stub, lowered the rest of the way and dropped. The rest of
// the pipeline treats each function on its own, under the module attributes
// that all kernels of a spec share, so the same lowered code is the same
// machine code. FlashAttention's instantiation set (1,050
// kernels) has 315 distinct tile functions.
//
//===----------------------------------------------------------------------===//

#include "SharedTiles.h"

#include "Emit.h"
#include "IRDigest.h"

#include "attnc/Conversion/Common/KernelEntry.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

size_t attnc::SharedTiles::share(size_t index, const std::string &key) {
  std::unique_lock<std::mutex> lock(mutex);
  done[index] = true;
  while (prefix < done.size() && done[prefix])
    ++prefix;
  size_t *first = key.empty() ? nullptr : &firstWith.try_emplace(key, index).first->second;
  if (first)
    *first = std::min(*first, index);
  recorded.notify_all();
  // Kernels are claimed in spec order and each records before it waits, so
  // the earlier ones are recorded soon (their MLIR pipeline, not their -O3).
  // Once they are, the key's first kernel among them is the owner.
  recorded.wait(lock, [&] { return prefix >= index; });
  return first ? *first : index;
}

static std::string tileName(llvm::StringRef kernel) {
  return attn::phaseFunctionName(kernel, "tile");
}

static std::string cifaceName(llvm::StringRef kernel) {
  return attn::cInterfaceName(tileName(kernel));
}

/// The functions `roots` (all defined, or the result is empty) and what they
/// reference, transitively, in a fixed order.
static llvm::SmallVector<Operation *> closureOf(ModuleOp module,
                                                llvm::ArrayRef<std::string> roots) {
  llvm::SmallVector<Operation *> closure;
  for (const std::string &name : roots) {
    auto fn = dyn_cast_or_null<FunctionOpInterface>(module.lookupSymbol(name));
    if (!fn || fn.isExternal())
      return {};
    closure.push_back(fn);
  }
  llvm::SmallPtrSet<Operation *, 8> seen(closure.begin(), closure.end());
  for (size_t i = 0; i < closure.size(); ++i) {
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(closure[i]);
    if (!uses)
      return {}; // an op MLIR cannot see into: not shared
    for (const SymbolTable::SymbolUse &use : *uses)
      if (Operation *op = SymbolTable::lookupSymbolIn(module, use.getSymbolRef()))
        if (seen.insert(op).second)
          closure.push_back(op);
  }
  return closure;
}

std::string attnc::tileKey(ModuleOp module, llvm::StringRef kernel) {
  llvm::SmallVector<Operation *> closure = closureOf(module, {tileName(kernel)});
  if (closure.empty())
    return "";
  // A copy in which the tile function and the private symbols it uses are
  // named by their place in the closure. What the module declares (a libm
  // function) or makes public (a test's tile counter, one per kernel) keeps
  // its name: two kernels share only when they refer to the same of those.
  OwningOpRef<ModuleOp> copy = ModuleOp::create(UnknownLoc::get(module.getContext()));
  for (Operation *op : closure)
    copy->push_back(op->clone());
  SymbolTable table(*copy);
  unsigned renamed = 0;
  for (Operation &op : llvm::make_early_inc_range(copy->getBody()->getOperations())) {
    auto symbol = cast<SymbolOpInterface>(op);
    bool own = renamed == 0 || (symbol.isPrivate() && !symbol.isDeclaration());
    if (own && failed(table.rename(&op, "attnc.shared." + std::to_string(renamed++))))
      return "";
  }
  return irDigest(*copy);
}

bool attnc::stubTile(ModuleOp module, llvm::StringRef kernel) {
  auto tile = module.lookupSymbol<func::FuncOp>(tileName(kernel));
  if (!tile || tile.isExternal())
    return false;
  llvm::SmallVector<TypedAttr> zeros;
  for (Type type : tile.getResultTypes())
    if (auto zero = dyn_cast_or_null<TypedAttr>(Builder(type.getContext()).getZeroAttr(type)))
      zeros.push_back(zero);
    else
      return false;
  Region &body = tile.getBody();
  body.dropAllReferences();
  body.getBlocks().clear();
  Block *block = tile.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(block);
  llvm::SmallVector<Value> results;
  for (TypedAttr zero : zeros)
    results.push_back(arith::ConstantOp::create(b, tile.getLoc(), zero));
  func::ReturnOp::create(b, tile.getLoc(), results);
  return true;
}

void attnc::useTileOf(ModuleOp module, llvm::StringRef kernel, llvm::StringRef owner,
                      llvm::StringRef suffix) {
  llvm::SmallVector<Operation *> closure =
      closureOf(module, {cifaceName(kernel), tileName(kernel)});
  if (closure.empty())
    return;
  // The wrapper becomes a declaration of the owner's, which stays external.
  auto ciface = cast<LLVM::LLVMFuncOp>(closure[0]);
  ciface.getBody().dropAllReferences();
  ciface.getBody().getBlocks().clear();
  ciface.setLinkage(LLVM::Linkage::External);
  SymbolTable table(module);
  if (failed(table.rename(ciface, emit::variantName(cifaceName(owner), suffix))))
    return;
  // Then what no longer has a use, until nothing more goes.
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&op : llvm::drop_begin(closure))
      if (op && SymbolTable::symbolKnownUseEmpty(op, module)) {
        table.erase(op);
        op = nullptr;
        erased = true;
      }
  }
}
