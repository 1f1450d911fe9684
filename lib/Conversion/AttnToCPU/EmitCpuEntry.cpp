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
// The descriptor's LLVM struct is built from ATTNC_KERNEL_DESC_FIELDS, the
// list attnc_kernel_desc itself is generated from, and each field is filled
// by name: from the kernel's facts, or (abi_version, device_type, dtype_code,
// dtype_bits) by this pass. A field without a value is an error.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToCPU/FlashKernel.h"
#include "attnc/Runtime/KernelDescFields.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMITCPUENTRYPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

LLVM::GlobalOp mlir::attn::addStringGlobal(OpBuilder &b, Location loc, StringRef symbol,
                                           StringRef text) {
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size() + 1);
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
                                symbol, b.getStringAttr(text.str() + '\0'));
}

namespace {

constexpr StringLiteral kLaunch = "attnc_rt_launch";

struct AttnEmitCpuEntryPass
    : public mlir::attn::impl::AttnEmitCpuEntryPassBase<AttnEmitCpuEntryPass> {
  using AttnEmitCpuEntryPassBase::AttnEmitCpuEntryPassBase;

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
    auto type =
        LLVM::LLVMFunctionType::get(b.getI32Type(), SmallVector<Type>(7, ptr));
    LLVM::LLVMFuncOp::create(b, module.getLoc(), kLaunch, type);
  }

  /// The integer fields of `kernel`'s descriptor by field name: its facts
  /// from attn.cpu_kernels, plus the ABI version, the device and the dtype as
  /// DLPack spells them, which this pass decides.
  FailureOr<llvm::StringMap<int64_t>>
  integerFields(ModuleOp module, StringRef kernel, DictionaryAttr info) {
    llvm::StringMap<int64_t> numbers;
    for (NamedAttribute fact : info)
      if (auto value = dyn_cast<IntegerAttr>(fact.getValue()))
        numbers[fact.getName()] = value.getInt();
    numbers["abi_version"] = ATTNC_ABI_VERSION;
    // Tile functions run on the runtime's CPU thread pool; a grid kernel
    // states its device among its facts.
    if (!numbers.count("device_type"))
      numbers["device_type"] = kDLCPU;
    auto dtype = dyn_cast_or_null<TypeAttr>(info.get("dtype"));
    if (!dtype)
      return module.emitError("attn-emit-cpu-entry: kernel '")
             << kernel << "' has no 'dtype' type in attn.cpu_kernels";
    Type type = dtype.getValue();
    if (type.isF32() || type.isF16())
      numbers["dtype_code"] = kDLFloat;
    else if (type.isBF16())
      numbers["dtype_code"] = kDLBfloat;
    else
      return module.emitError("attn-emit-cpu-entry: kernel '")
             << kernel << "' has dtype " << type
             << ", which has no DLPack spelling here; expected f32, f16 or "
                "bf16";
    numbers["dtype_bits"] = type.getIntOrFloatBitWidth();
    numbers["cpu_needs"] = cpuNeeds;
    return numbers;
  }

  LogicalResult emitKernel(OpBuilder &b, ModuleOp module, DictionaryAttr info) {
    Location loc = module.getLoc();
    MLIRContext *ctx = b.getContext();
    auto nameAttr = dyn_cast_or_null<StringAttr>(info.get("name"));
    if (!nameAttr)
      return module.emitError("attn-emit-cpu-entry: a kernel of "
                              "attn.cpu_kernels has no string 'name': ")
             << info;
    std::string name = nameAttr.str();
    // A kernel has a tile function (per work item) or a grid function (the
    // whole tensors); the descriptor's other pointer is null.
    std::string tile = "_mlir_ciface_" + name + "_tile";
    std::string grid = "_mlir_ciface_" + name + "_grid";
    bool hasTile = SymbolTable::lookupSymbolIn(module, tile),
         hasGrid = SymbolTable::lookupSymbolIn(module, grid);
    if (hasTile == hasGrid)
      return module.emitError("attn-emit-cpu-entry: kernel '")
             << name << "' needs one of the functions " << tile << " and " << grid;
    std::string nameGlobal = name + "_name", targetGlobal = name + "_target";

    FailureOr<llvm::StringMap<int64_t>> numbers =
        integerFields(module, name, info);
    if (failed(numbers))
      return failure();
    llvm::StringMap<std::string> symbols = {{"name", nameGlobal},
                                            {"target", target.empty() ? "" : targetGlobal},
                                            {"tile", hasTile ? tile : ""},
                                            {"grid", hasGrid ? grid : ""}};

    // Every field is looked up by name before anything is built, so a fact
    // the descriptor needs but attn.cpu_kernels lacks is an error, not a 0.
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    SmallVector<Type> fieldTypes;
    for (const attnc::DescField &field : attnc::kKernelDescFields) {
      auto fail = [&](StringRef why) {
        return module.emitError("attn-emit-cpu-entry: kernel '")
               << name << "': descriptor field '" << field.name << "' " << why;
      };
      switch (field.kind) {
      case attnc::DescFieldKind::I32:
      case attnc::DescFieldKind::I64: {
        auto it = numbers->find(field.name);
        if (it == numbers->end())
          return fail("has no value in attn.cpu_kernels");
        bool is32 = field.kind == attnc::DescFieldKind::I32;
        if (is32 && !llvm::isInt<32>(it->second))
          return fail("is ") << it->second << ", which does not fit int32";
        fieldTypes.push_back(is32 ? i32 : i64);
        break;
      }
      case attnc::DescFieldKind::Ptr:
        if (!symbols.count(field.name))
          return fail("is a pointer this pass does not know how to fill");
        fieldTypes.push_back(ptr);
        break;
      }
    }
    // Named after the C struct, so the LLVM IR reads %attnc_kernel_desc.
    auto descType =
        LLVM::LLVMStructType::getIdentified(ctx, "attnc_kernel_desc");
    if (failed(descType.setBody(fieldTypes, /*isPacked=*/false)))
      return module.emitError("attn-emit-cpu-entry: the context already holds "
                              "another struct named attnc_kernel_desc");

    mlir::attn::addStringGlobal(b, loc, nameGlobal, name);
    if (!target.empty())
      mlir::attn::addStringGlobal(b, loc, targetGlobal, target);

    auto desc = LLVM::GlobalOp::create(b, loc, descType, /*isConstant=*/true,
                                       LLVM::Linkage::Internal, name + "_desc",
                                       Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.createBlock(&desc.getInitializerRegion()));
      Value s = LLVM::UndefOp::create(b, loc, descType);
      for (auto [pos, field, type] :
           llvm::enumerate(attnc::kKernelDescFields, fieldTypes)) {
        Value v;
        if (field.kind != attnc::DescFieldKind::Ptr)
          v = LLVM::ConstantOp::create(b, loc, type, numbers->lookup(field.name));
        else if (symbols[field.name].empty())
          v = LLVM::ZeroOp::create(b, loc, ptr);
        else
          v = LLVM::AddressOfOp::create(b, loc, ptr, symbols[field.name]);
        s = LLVM::InsertValueOp::create(b, loc, s, v, pos);
      }
      LLVM::ReturnOp::create(b, loc, s);
    }

    auto entryType =
        LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(6, ptr));
    auto entry = LLVM::LLVMFuncOp::create(b, loc, name, entryType);
    OpBuilder::InsertionGuard guard(b);
    Block *body = entry.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> args{
        LLVM::AddressOfOp::create(b, loc, ptr, name + "_desc")};
    llvm::append_range(args, body->getArguments());
    auto call = LLVM::CallOp::create(
        b, loc, TypeRange{i32}, FlatSymbolRefAttr::get(ctx, kLaunch), args);
    LLVM::ReturnOp::create(b, loc, call.getResult());
    return success();
  }
};

} // namespace
