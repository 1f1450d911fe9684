//===- EmitCpuEntry.cpp - attn-emit-cpu-entry: C entry + descriptor -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs on the LLVM dialect (after attn-lower-to-llvm's conversions). For each
// kernel of `attn.cpu_kernels` it adds a constant attnc_kernel_desc and the
// exported `int <name>(q, k, v, out, lse, opt)` that calls attnc_rt_launch.
// The struct below must match attnc_kernel_desc in attnc_runtime.h.
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMITCPUENTRYPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

constexpr StringLiteral kLaunch = "attnc_rt_launch";

struct AttnEmitCpuEntryPass
    : public mlir::attn::impl::AttnEmitCpuEntryPassBase<AttnEmitCpuEntryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module->getAttrOfType<ArrayAttr>("attn.cpu_kernels");
    if (!kernels)
      return;
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    declareLaunch(b, module);
    for (Attribute kernel : kernels)
      if (failed(emitKernel(b, module, cast<DictionaryAttr>(kernel))))
        return signalPassFailure();
    module->removeAttr("attn.cpu_kernels");
  }

  void declareLaunch(OpBuilder &b, ModuleOp module) {
    if (SymbolTable::lookupSymbolIn(module, kLaunch))
      return;
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto type = LLVM::LLVMFunctionType::get(b.getI32Type(),
                                            SmallVector<Type>(7, ptr));
    b.create<LLVM::LLVMFuncOp>(module.getLoc(), kLaunch, type);
  }

  LogicalResult emitKernel(OpBuilder &b, ModuleOp module, DictionaryAttr info) {
    Location loc = module.getLoc();
    MLIRContext *ctx = b.getContext();
    auto field = [&](StringRef key) {
      return cast<IntegerAttr>(info.get(key)).getInt();
    };
    std::string name = cast<StringAttr>(info.get("name")).str();
    std::string tile = "_mlir_ciface_" + name + "_tile";
    if (!SymbolTable::lookupSymbolIn(module, tile))
      return module.emitError("attn-emit-cpu-entry: no tile function ") << tile;

    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    // attnc_kernel_desc: eight int32, two int64, two pointers.
    SmallVector<Type> fields(8, i32);
    fields.append({i64, i64, ptr, ptr});
    auto descType = LLVM::LLVMStructType::getLiteral(ctx, fields);

    std::string nameGlobal = name + "_name";
    auto strType = LLVM::LLVMArrayType::get(b.getI8Type(), name.size() + 1);
    b.create<LLVM::GlobalOp>(loc, strType, /*isConstant=*/true,
                             LLVM::Linkage::Private, nameGlobal,
                             b.getStringAttr(name + '\0'));

    auto desc = b.create<LLVM::GlobalOp>(loc, descType, /*isConstant=*/true,
                                         LLVM::Linkage::Internal, name + "_desc",
                                         Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.createBlock(&desc.getInitializerRegion()));
      Value s = b.create<LLVM::UndefOp>(loc, descType);
      int64_t values[] = {ATTNC_ABI_VERSION,  field("num_heads"),
                          field("num_kv_heads"), field("head_dim"),
                          32,                 field("layout"),
                          field("outputs"),   field("block_q")};
      for (auto [pos, v] : llvm::enumerate(values))
        s = b.create<LLVM::InsertValueOp>(
            loc, s, b.create<LLVM::ConstantOp>(loc, i32, v), pos);
      s = b.create<LLVM::InsertValueOp>(
          loc, s, b.create<LLVM::ConstantOp>(loc, i64, field("max_seq_q")), 8);
      s = b.create<LLVM::InsertValueOp>(
          loc, s, b.create<LLVM::ConstantOp>(loc, i64, field("max_seq_kv")), 9);
      s = b.create<LLVM::InsertValueOp>(
          loc, s, b.create<LLVM::AddressOfOp>(loc, ptr, nameGlobal), 10);
      s = b.create<LLVM::InsertValueOp>(
          loc, s, b.create<LLVM::AddressOfOp>(loc, ptr, tile), 11);
      b.create<LLVM::ReturnOp>(loc, s);
    }

    auto entryType = LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(6, ptr));
    auto entry = b.create<LLVM::LLVMFuncOp>(loc, name, entryType);
    OpBuilder::InsertionGuard guard(b);
    Block *body = entry.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> args{b.create<LLVM::AddressOfOp>(loc, ptr, name + "_desc")};
    llvm::append_range(args, body->getArguments());
    auto call = b.create<LLVM::CallOp>(
        loc, TypeRange{i32}, FlatSymbolRefAttr::get(ctx, kLaunch), args);
    b.create<LLVM::ReturnOp>(loc, call.getResult());
    return success();
  }
};

} // namespace
