//===- KernelFamilyTest.cpp - a second kernel family through attnc --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a new kernel family's op meets before any backend lowers it: a test
// dialect's `test_family.scan` implements KernelFamilyOpInterface. An
// attn.kernel holds it; every backend refuses it at compile time, naming the
// op, the backend and the target; and attn-emit-cpu-entry writes its
// descriptor tables from the family's own interface (two tensors, one phase
// over chunks), knowing nothing of it.
//
//===----------------------------------------------------------------------===//

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/InitAll.h"
#include "attnc/Target/Compile.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// A prefix scan over x [n] into y [n] in chunks of 64: the family's facts
/// are only the chunk size.
class ScanOp : public Op<ScanOp, OpTrait::ZeroRegions, OpTrait::ZeroResults,
                         OpTrait::ZeroSuccessors, OpTrait::ZeroOperands,
                         attn::KernelFamilyOpInterface::Trait> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ScanOp)
  using Op::Op;
  static StringRef getOperationName() { return "test_family.scan"; }
  static ArrayRef<StringRef> getAttributeNames() { return {}; }

  StringRef getFamily() { return "scan"; }

  DictionaryAttr describeEntry(StringRef name, int64_t) {
    Builder b(getContext());
    return b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(name)),
                                b.getNamedAttr("op", b.getStringAttr(getOperationName())),
                                b.getNamedAttr("chunk", b.getI64IntegerAttr(64))});
  }

  static FailureOr<attnc::KernelInterface> interfaceFromEntry(Location loc,
                                                              DictionaryAttr entry) {
    auto chunk = dyn_cast_or_null<IntegerAttr>(entry.get("chunk"));
    if (!chunk)
      return mlir::emitError(loc, "scan entry without 'chunk'");
    attnc::KernelInterface in;
    in.symbols = {{"n", -1, 0, 0, 0}, {"chunk", chunk.getInt(), 0, -1, 0}};
    auto tensor = [](const char *name, int32_t arg, int32_t flags) {
      attnc::TensorSpec t;
      t.name = name;
      t.dims = t.legend = "n";
      t.arg = arg;
      t.flags = flags | ATTNC_TENSOR_UNIT_INNER;
      t.dtypeCode = kDLFloat;
      t.dtypeBits = 32;
      t.strideParam = 1;
      return t;
    };
    in.tensors = {tensor("x", 0, 0), tensor("y", 1, ATTNC_TENSOR_OUTPUT)};
    // Each chunk's own scan, then each chunk adds the totals before it.
    in.phases = {{"scan", "n/chunk", "c", false}, {"fixup", "n/chunk", "c", false}};
    in.numArgs = 2;
    in.numParams = 2;
    return in;
  }
};

class TestFamilyDialect : public Dialect {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestFamilyDialect)
  explicit TestFamilyDialect(MLIRContext *ctx)
      : Dialect(getDialectNamespace(), ctx, TypeID::get<TestFamilyDialect>()) {
    addOperations<ScanOp>();
  }
  static StringRef getDialectNamespace() { return "test_family"; }
};

/// A context with attnc's dialects and the test family's, collecting errors.
struct Fixture : ::testing::Test {
  Fixture() {
    // compileSpec applies MLIR's pass manager and timing options, as attnc does.
    static bool once = [] {
      registerPassManagerCLOptions();
      registerDefaultTimingManagerCLOptions();
      return true;
    }();
    (void)once;
    DialectRegistry registry;
    attnc::registerAllDialects(registry);
    registry.insert<TestFamilyDialect>();
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    context.getDiagEngine().registerHandler([this](Diagnostic &d) {
      errors += d.str() + "\n";
      return success();
    });
  }
  OwningOpRef<ModuleOp> parse(StringRef text) {
    return parseSourceString<ModuleOp>(text, &context);
  }
  MLIRContext context;
  std::string errors;
};

constexpr StringLiteral kScanKernel = R"(
  attn.kernel @s {
    "test_family.scan"() : () -> ()
  }
)";

TEST_F(Fixture, KernelHoldsAnotherFamilysOp) {
  OwningOpRef<ModuleOp> module = parse(kScanKernel);
  ASSERT_TRUE(module) << errors;
  auto kernel = *module->getOps<attn::KernelOp>().begin();
  ASSERT_TRUE(kernel.getCompute());
  EXPECT_EQ(kernel.getCompute().getFamily(), "scan");
  EXPECT_FALSE(kernel.getFlash());
  EXPECT_FALSE(kernel.getSpec());
}

/// Compiling the scan kernel with `backend` for `target` fails, and the error
/// says that backend has no lowering for the op there.
void expectRefused(Fixture &f, StringRef backend, StringRef target, StringRef says) {
  OwningOpRef<ModuleOp> module = f.parse(kScanKernel);
  ASSERT_TRUE(module) << f.errors;
  llvm::Expected<attnc::Selection> selection = attnc::select(backend, target, {});
  ASSERT_TRUE(bool(selection)) << llvm::toString(selection.takeError());
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("attnc-family", "o", path));
  attnc::CompileOutput output;
  output.path = path.str().str();
  llvm::Error err = attnc::compileSpec(*module, *selection, attnc::EmitStage::obj, output);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(bool(err)) << backend.str() << " " << target.str();
  f.errors += llvm::toString(std::move(err));
  EXPECT_NE(f.errors.find(says.str()), std::string::npos) << f.errors;
}

TEST_F(Fixture, EveryBackendNamesTheOpItCannotLower) {
  expectRefused(*this, "mlir", "x86-64-avx2",
                "'test_family.scan' op (the scan kernel family) has no lowering in the MLIR "
                "CPU backend for target x86-64-avx2");
  expectRefused(*this, "mlir", "cuda-sm80",
                "'test_family.scan' op (the scan kernel family) has no lowering in the MLIR "
                "CUDA backend for target cuda-sm80");
  expectRefused(*this, "halide", "x86-64-avx2",
                "'test_family.scan' op (the scan kernel family) has no lowering in the Halide "
                "backend for target x86-64-avx2");
}

TEST_F(Fixture, EntryTablesComeFromTheFamily) {
  // What a scan lowering would leave: its entry and a tile function per
  // phase, which takes the two tensors' views, params and the chunk index.
  OwningOpRef<ModuleOp> module = parse(R"(
    module attributes {attn.cpu_kernels = [{chunk = 64 : i64, name = "s", op = "test_family.scan"}]} {
      llvm.func @_mlir_ciface_s_tile(%x: !llvm.ptr, %y: !llvm.ptr, %p: !llvm.ptr, %c: i64) -> i32 {
        %0 = llvm.mlir.constant(0 : i32) : i32
        llvm.return %0 : i32
      }
      llvm.func @_mlir_ciface_s_fixup_tile(%x: !llvm.ptr, %y: !llvm.ptr, %p: !llvm.ptr, %c: i64) -> i32 {
        %0 = llvm.mlir.constant(0 : i32) : i32
        llvm.return %0 : i32
      }
    }
  )");
  ASSERT_TRUE(module) << errors;
  PassManager pm(&context);
  pm.addPass(attn::createAttnEmitCpuEntryPass());
  ASSERT_TRUE(succeeded(pm.run(*module))) << errors;
  auto arrayLength = [&](StringRef global) -> int64_t {
    auto op = module->lookupSymbol<LLVM::GlobalOp>(global);
    auto type = op ? dyn_cast<LLVM::LLVMArrayType>(op.getGlobalType()) : nullptr;
    return type ? int64_t(type.getNumElements()) : -1;
  };
  EXPECT_EQ(arrayLength("s_symbols"), 2);
  EXPECT_EQ(arrayLength("s_tensors"), 2);
  EXPECT_EQ(arrayLength("s_phases"), 2);
  // The exported entry takes the family's two tensors and the options, and
  // runs through attnc_rt_run (attnc_rt_launch is attention's five).
  auto entry = module->lookupSymbol<LLVM::LLVMFuncOp>("s");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry.getNumArguments(), 3u);
  bool runs = false;
  entry.walk([&](LLVM::CallOp call) { runs |= call.getCallee() == StringRef("attnc_rt_run"); });
  EXPECT_TRUE(runs);
  // Each phase's item function hands its tile function one coordinate
  // (phase index "c").
  for (auto names : {std::pair<StringRef, StringRef>{"s_item", "_mlir_ciface_s_tile"},
                     {"s_fixup_item", "_mlir_ciface_s_fixup_tile"}}) {
    StringRef item = names.first, tile = names.second;
    auto fn = module->lookupSymbol<LLVM::LLVMFuncOp>(item);
    ASSERT_TRUE(fn) << item.str();
    bool calls = false;
    fn.walk([&](LLVM::CallOp call) {
      calls = call.getCallee() == tile && call.getNumOperands() == 4;
    });
    EXPECT_TRUE(calls) << item.str();
    EXPECT_FALSE(SymbolTable::symbolKnownUseEmpty(fn, *module)) << item.str() << " unlisted";
  }
}

} // namespace
