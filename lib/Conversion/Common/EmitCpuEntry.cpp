//===- EmitCpuEntry.cpp - attn-emit-cpu-entry: C entry + descriptor -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Runs on the LLVM dialect (after attn-lower-to-llvm's conversions). For each
// kernel of `attn.cpu_kernels` it adds a constant attnc_kernel_desc with its
// symbol, tensor and phase tables (kernel interface v2, from
// attnc/Interface), the phase's item (or device) function that unpacks the
// runtime's argument arrays for the kernel's tile (or grid) function, and the
// exported `int <name>(q, k, v, out, lse, opt)` that calls attnc_rt_launch.
// Each LLVM struct is built from the field list its C struct is generated
// from (attnc_runtime.h), and each field is filled by name; a field without
// a value is an error. `const attnc_kernel_desc *attnc_describe_<name>(void)`
// exports the descriptor, so that a host that loads the object at run time
// (the Python package) learns the kernel's tensors, dtypes and shapes from
// it without a header.
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/KernelEntry.h"
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
using namespace mlir::attn;

namespace {

constexpr StringLiteral kLaunch = "attnc_rt_launch", kRun = "attnc_rt_run";

/// One C struct's field values by name: integers, and pointers as the
/// symbols they point at ("" for NULL).
struct FieldValues {
  llvm::StringMap<int64_t> ints;
  llvm::StringMap<std::string> pointers;
};

struct AttnEmitCpuEntryPass
    : public mlir::attn::impl::AttnEmitCpuEntryPassBase<AttnEmitCpuEntryPass> {
  using AttnEmitCpuEntryPassBase::AttnEmitCpuEntryPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module->getAttrOfType<ArrayAttr>(kKernelEntriesAttr);
    if (!kernels)
      return;
    strings.clear();
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    declare(b, module, kLaunch, 7);
    for (Attribute kernel : kernels)
      if (failed(emitKernel(b, module, cast<DictionaryAttr>(kernel))))
        return signalPassFailure();
    module->removeAttr(kKernelEntriesAttr);
  }

  /// `int fn(ptr x params)`, unless the module has it: attnc_rt_launch
  /// (attention's five tensors) or attnc_rt_run (an array of them).
  void declare(OpBuilder &b, ModuleOp module, StringRef fn, int params) {
    if (SymbolTable::lookupSymbolIn(module, fn))
      return;
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    LLVM::LLVMFuncOp::create(
        b, module.getLoc(), fn,
        LLVM::LLVMFunctionType::get(b.getI32Type(), SmallVector<Type>(params, ptr)));
  }

  InFlightDiagnostic error(ModuleOp module, StringRef kernel) {
    return module.emitError("attn-emit-cpu-entry: kernel '") << kernel << "': ";
  }

  /// An identified LLVM struct laid out from `fields` (named after the C struct).
  FailureOr<LLVM::LLVMStructType> structType(ModuleOp module, StringRef name,
                                             ArrayRef<attnc::DescField> fields) {
    MLIRContext *ctx = module.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    SmallVector<Type> types;
    for (const attnc::DescField &field : fields)
      types.push_back(field.kind == attnc::DescFieldKind::Ptr ? Type(ptr)
                      : field.kind == attnc::DescFieldKind::I32
                          ? Type(IntegerType::get(ctx, 32))
                          : Type(IntegerType::get(ctx, 64)));
    auto type = LLVM::LLVMStructType::getIdentified(ctx, name);
    if (type.isInitialized() ? type.getBody() != ArrayRef<Type>(types)
                             : failed(type.setBody(types, /*isPacked=*/false))) {
      module.emitError("attn-emit-cpu-entry: the context already holds another struct named ")
          << name;
      return failure();
    }
    return type;
  }

  /// Builds a `type` value field by field from `values`, at the builder.
  FailureOr<Value> buildStruct(OpBuilder &b, ModuleOp module, StringRef kernel,
                               LLVM::LLVMStructType type, ArrayRef<attnc::DescField> fields,
                               const FieldValues &values) {
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    Value s = LLVM::UndefOp::create(b, loc, type);
    for (auto [pos, field] : llvm::enumerate(fields)) {
      Type fieldType = type.getBody()[pos];
      Value v;
      if (field.kind == attnc::DescFieldKind::Ptr) {
        auto it = values.pointers.find(field.name);
        if (it == values.pointers.end())
          return error(module, kernel) << type.getName() << " field '" << field.name
                                       << "' is a pointer this pass does not know how to fill";
        v = it->second.empty() ? Value(LLVM::ZeroOp::create(b, loc, ptr))
                               : Value(LLVM::AddressOfOp::create(b, loc, ptr, it->second));
      } else {
        auto it = values.ints.find(field.name);
        if (it == values.ints.end())
          return error(module, kernel) << type.getName() << " field '" << field.name
                                       << "' has no value";
        if (field.kind == attnc::DescFieldKind::I32 && !llvm::isInt<32>(it->second))
          return error(module, kernel) << type.getName() << " field '" << field.name
                                       << "' is " << it->second << ", which does not fit int32";
        v = LLVM::ConstantOp::create(b, loc, fieldType, it->second);
      }
      s = LLVM::InsertValueOp::create(b, loc, s, v, pos);
    }
    return s;
  }

  /// A private constant string global holding `text` (one per distinct text).
  std::string stringSymbol(OpBuilder &b, ModuleOp module, StringRef text) {
    std::string &symbol = strings[text];
    if (symbol.empty()) {
      symbol = "attnc_str_" + std::to_string(strings.size() - 1);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      addStringGlobal(b, module.getLoc(), symbol, text);
    }
    return symbol;
  }

  /// A constant global array `symbol` of `type`, entry i from `entries[i]`.
  LogicalResult emitTable(OpBuilder &b, ModuleOp module, StringRef kernel, StringRef symbol,
                          StringRef typeName, ArrayRef<attnc::DescField> fields,
                          ArrayRef<FieldValues> entries) {
    FailureOr<LLVM::LLVMStructType> type = structType(module, typeName, fields);
    if (failed(type))
      return failure();
    Location loc = module.getLoc();
    auto arrayType = LLVM::LLVMArrayType::get(*type, entries.size());
    auto global = LLVM::GlobalOp::create(b, loc, arrayType, /*isConstant=*/true,
                                         LLVM::Linkage::Internal, symbol, Attribute());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(b.createBlock(&global.getInitializerRegion()));
    Value array = LLVM::UndefOp::create(b, loc, arrayType);
    for (auto [i, entry] : llvm::enumerate(entries)) {
      FailureOr<Value> value = buildStruct(b, module, kernel, *type, fields, entry);
      if (failed(value))
        return failure();
      array = LLVM::InsertValueOp::create(b, loc, array, *value, int64_t(i));
    }
    LLVM::ReturnOp::create(b, loc, array);
    return success();
  }

  LogicalResult emitTables(OpBuilder &b, ModuleOp module, StringRef name,
                           const attnc::KernelInterface &in, ArrayRef<std::string> phaseFns,
                           bool onDevice) {
    auto text = [&](const std::string &s) {
      return s.empty() ? std::string() : stringSymbol(b, module, s);
    };
    SmallVector<FieldValues> symbols, tensors, phases;
    for (const attnc::SymbolSpec &s : in.symbols)
      symbols.push_back({{{"value", s.value}, {"max", s.max}, {"param", s.param},
                          {"flags", s.flags}},
                         {{"name", text(s.name)}}});
    for (const attnc::TensorSpec &t : in.tensors)
      tensors.push_back({{{"arg", t.arg}, {"flags", t.flags}, {"dtype_code", t.dtypeCode},
                          {"dtype_bits", t.dtypeBits}, {"stride_param", t.strideParam},
                          {"fill", t.fill}},
                         {{"name", text(t.name)}, {"dims", text(t.dims)},
                          {"legend", text(t.legend)}, {"about", text(t.about)},
                          {"strides", text(t.strides)}, {"bound", text(t.bound)}}});
    for (auto [p, fn] : llvm::zip_equal(in.phases, phaseFns))
      phases.push_back({{},
                        {{"name", text(p.name)}, {"items", text(p.items)},
                         {"index", text(p.index)}, {"item", onDevice ? "" : fn},
                         {"device", onDevice ? fn : ""}}});
    return success(
        succeeded(emitTable(b, module, name, (name + "_symbols").str(), "attnc_symbol_desc",
                            attnc::kSymbolDescFields, symbols)) &&
        succeeded(emitTable(b, module, name, (name + "_tensors").str(), "attnc_tensor_desc",
                            attnc::kTensorDescFields, tensors)) &&
        succeeded(emitTable(b, module, name, (name + "_phases").str(), "attnc_phase_desc",
                            attnc::kPhaseDescFields, phases)));
  }

  /// `<name>_item(tensors, params, index)` (or `<name>_device(tensors, params,
  /// extents, device_id, stream)`), which calls the kernel's tile (or grid)
  /// function with the tensors' views one by one (arguments, then scratch), params and the item's
  /// coordinates (or the outermost extent, batch, the device and the stream).
  LogicalResult emitPhaseFunction(OpBuilder &b, ModuleOp module, StringRef name,
                                  StringRef kernelFn, StringRef phaseFn, int numViews,
                                  int rank, bool onDevice) {
    Location loc = module.getLoc();
    MLIRContext *ctx = b.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto fn = dyn_cast_or_null<LLVM::LLVMFuncOp>(SymbolTable::lookupSymbolIn(module, kernelFn));
    unsigned count = numViews + 1 + (onDevice ? 3 : rank);
    if (!fn || fn.getNumArguments() != count)
      return error(module, name) << kernelFn << " does not take the " << count
                                 << " arguments its phase passes";
    SmallVector<Type> params = onDevice ? SmallVector<Type>{ptr, ptr, ptr, i64, ptr}
                                        : SmallVector<Type>{ptr, ptr, ptr};
    auto phase = LLVM::LLVMFuncOp::create(b, loc, phaseFn, LLVM::LLVMFunctionType::get(i32, params),
                                          LLVM::Linkage::Internal);
    OpBuilder::InsertionGuard guard(b);
    Block *body = phase.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    auto memref = LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, i64, i64, i64});
    SmallVector<Value> args;
    for (int a = 0; a < numViews; ++a)
      args.push_back(LLVM::GEPOp::create(b, loc, ptr, memref, body->getArgument(0),
                                         ArrayRef<LLVM::GEPArg>{a}));
    args.push_back(body->getArgument(1));
    for (int c = 0; c < (onDevice ? 1 : rank); ++c) {
      Value at = LLVM::GEPOp::create(b, loc, ptr, i64, body->getArgument(2),
                                     ArrayRef<LLVM::GEPArg>{c});
      args.push_back(LLVM::LoadOp::create(b, loc, i64, at));
    }
    if (onDevice)
      args.append({body->getArgument(3), body->getArgument(4)});
    auto call = LLVM::CallOp::create(b, loc, fn, args);
    LLVM::ReturnOp::create(b, loc, call.getResult());
    return success();
  }

  LogicalResult emitKernel(OpBuilder &b, ModuleOp module, DictionaryAttr info) {
    Location loc = module.getLoc();
    FailureOr<KernelEntry> entry = entryFromAttr(module, info);
    if (failed(entry))
      return failure();
    const std::string &name = entry->name;
    attnc::KernelInterface &in = entry->interface;
    if (in.phases.empty())
      return error(module, name) << "has no phase";
    // A kernel has a tile function per phase (per work item) or a grid
    // function (the whole tensors, on a device): _mlir_ciface_<name>_tile for
    // the first phase, _mlir_ciface_<name>_<phase>_tile for a later one.
    auto kernelFn = [&](size_t phase, StringRef kind) {
      return cInterfaceName(phaseFunctionName(name, kind, phase ? in.phases[phase].name : ""));
    };
    std::string tile = kernelFn(0, "tile"), grid = kernelFn(0, "grid");
    bool hasTile = SymbolTable::lookupSymbolIn(module, tile),
         hasGrid = SymbolTable::lookupSymbolIn(module, grid);
    if (hasTile == hasGrid)
      return error(module, name) << "needs one of the functions " << tile << " and " << grid;
    SmallVector<std::string> phaseFns;
    for (auto [i, phase] : llvm::enumerate(in.phases)) {
      phase.onDevice = hasGrid;
      std::string stem = i ? name + "_" + phase.name : name;
      phaseFns.push_back(stem + (hasGrid ? "_device" : "_item"));
      // An item's coordinates, one per name of its phase's index ("b,h,q_tile").
      int rank = 1 + int(llvm::count(phase.index, ','));
      if (failed(emitPhaseFunction(b, module, name, kernelFn(i, hasGrid ? "grid" : "tile"),
                                   phaseFns.back(), in.numViews(), rank, hasGrid)))
        return failure();
    }
    if (failed(emitTables(b, module, name, in, phaseFns, hasGrid)))
      return failure();

    FieldValues desc;
    desc.ints = {{"abi_version", ATTNC_ABI_VERSION},
                 {"device_type", entry->deviceType},
                 {"num_symbols", int64_t(in.symbols.size())},
                 {"num_tensors", int64_t(in.tensors.size())},
                 {"num_phases", int64_t(in.phases.size())},
                 {"num_args", in.numArgs},
                 {"num_params", in.numParams},
                 {"reserved", 0},
                 {"cpu_needs", cpuNeeds}};
    desc.pointers = {{"name", stringSymbol(b, module, name)},
                     {"target", target.empty() ? "" : stringSymbol(b, module, target)},
                     {"symbols", name + "_symbols"},
                     {"tensors", name + "_tensors"},
                     {"phases", name + "_phases"}};
    FailureOr<LLVM::LLVMStructType> descType =
        structType(module, "attnc_kernel_desc", attnc::kKernelDescFields);
    if (failed(descType))
      return failure();
    auto global = LLVM::GlobalOp::create(b, loc, *descType, /*isConstant=*/true,
                                         LLVM::Linkage::Internal, name + "_desc", Attribute());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(b.createBlock(&global.getInitializerRegion()));
      FailureOr<Value> value =
          buildStruct(b, module, name, *descType, attnc::kKernelDescFields, desc);
      if (failed(value))
        return failure();
      LLVM::ReturnOp::create(b, loc, *value);
    }
    emitEntry(b, module, name, in.numArgs);
    emitDescribe(b, module, name);
    return success();
  }

  /// The exported `const attnc_kernel_desc *attnc_describe_<name>(void)`.
  void emitDescribe(OpBuilder &b, ModuleOp module, StringRef name) {
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(b.getContext());
    auto fn = LLVM::LLVMFuncOp::create(b, loc, (Twine(ATTNC_DESCRIBE_PREFIX) + name).str(),
                                       LLVM::LLVMFunctionType::get(ptr, {}));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fn.addEntryBlock(b));
    LLVM::ReturnOp::create(b, loc,
                           LLVM::AddressOfOp::create(b, loc, ptr, (name + "_desc").str()));
  }

  /// The exported `int <name>(<tensors>..., opt)`: attention's five tensors
  /// go to attnc_rt_launch, any other list to attnc_rt_run as an array.
  void emitEntry(OpBuilder &b, ModuleOp module, StringRef name, int numArgs) {
    Location loc = module.getLoc();
    MLIRContext *ctx = b.getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = b.getI32Type();
    if (numArgs != 5)
      declare(b, module, kRun, 3);
    auto entryType = LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(numArgs + 1, ptr));
    auto entry = LLVM::LLVMFuncOp::create(b, loc, name, entryType);
    OpBuilder::InsertionGuard guard(b);
    Block *body = entry.addEntryBlock(b);
    b.setInsertionPointToStart(body);
    SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, (name + "_desc").str())};
    StringRef callee = kLaunch;
    if (numArgs == 5) {
      llvm::append_range(args, body->getArguments());
    } else {
      callee = kRun;
      auto arrayType = LLVM::LLVMArrayType::get(ptr, numArgs);
      Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1);
      Value array = LLVM::AllocaOp::create(b, loc, ptr, arrayType, one);
      for (int a = 0; a < numArgs; ++a) {
        Value at = LLVM::GEPOp::create(b, loc, ptr, ptr, array, ArrayRef<LLVM::GEPArg>{a});
        LLVM::StoreOp::create(b, loc, body->getArgument(a), at);
      }
      args.append({array, body->getArgument(numArgs)});
    }
    auto call =
        LLVM::CallOp::create(b, loc, TypeRange{i32}, FlatSymbolRefAttr::get(ctx, callee), args);
    LLVM::ReturnOp::create(b, loc, call.getResult());
  }

  /// Text -> its string global, shared by the module's kernels.
  llvm::StringMap<std::string> strings;
};

} // namespace
