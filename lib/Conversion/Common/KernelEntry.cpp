//===- KernelEntry.cpp - A kernel's entry, typed and as an attribute ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/Common/KernelEntry.h"

using namespace mlir;
using namespace mlir::attn;

FailureOr<KernelEntry> mlir::attn::entryFromAttr(ModuleOp module, DictionaryAttr info) {
  auto nameAttr = dyn_cast_or_null<StringAttr>(info.get("name"));
  if (!nameAttr)
    return module.emitError("attn-emit-cpu-entry: a kernel of attn.cpu_kernels has no string "
                            "'name': ")
           << info;
  KernelEntry e;
  e.name = nameAttr.str();
  auto opName = dyn_cast_or_null<StringAttr>(info.get("op"));
  std::optional<RegisteredOperationName> op =
      opName ? RegisteredOperationName::lookup(opName.getValue(), module.getContext())
             : std::nullopt;
  auto *family = op ? op->getInterface<KernelFamilyOpInterface>() : nullptr;
  if (!family) {
    InFlightDiagnostic d = module.emitError("attn-emit-cpu-entry: kernel '") << e.name << "': ";
    if (!opName)
      return d << "no string 'op' (its kernel family's op) in attn.cpu_kernels";
    return d << "'" << opName.getValue()
             << "' is no registered op of a kernel family (KernelFamilyOpInterface)";
  }
  FailureOr<attnc::KernelInterface> interface =
      family->interfaceFromEntry(module.getLoc(), info);
  if (failed(interface))
    return failure();
  e.interface = std::move(*interface);
  if (auto device = dyn_cast_or_null<IntegerAttr>(info.get("device_type")))
    e.deviceType = device.getInt();
  return e;
}

std::string mlir::attn::phaseFunctionName(StringRef kernel, StringRef kind, StringRef phase) {
  return (kernel + (phase.empty() ? "" : "_") + phase + "_" + kind).str();
}

std::string mlir::attn::cInterfaceName(StringRef function) {
  return ("_mlir_ciface_" + function).str();
}

FailureOr<FlashOp> mlir::attn::flashToLower(KernelOp kernel, StringRef backend,
                                            StringRef target, bool buildsDecode) {
  if (FlashOp flash = kernel.getFlash()) {
    if (flash.getNumSplits() && !buildsDecode)
      return flash.emitOpError("num_splits (a split-KV decode kernel) is built by the MLIR "
                               "backend (CPU and CUDA targets) only, not the ")
             << backend << " backend for target " << target
             << "; drop num_splits for a prefill-style kernel there";
    if (flash.getVarlen() && backend != "MLIR CPU")
      return flash.emitOpError("varlen = cu_seqlens (packed sequences) is built by the MLIR "
                               "CPU backend only, not the ")
             << backend << " backend for target " << target
             << "; pad the sequences to one length (batched bshd) there";
    if (flash.getAdditiveAttr() && backend != "MLIR CPU")
      return flash.emitOpError("additive scores are built by the MLIR CPU backend only so "
                               "far, not the ")
             << backend << " backend for target " << target;
    return flash;
  }
  KernelFamilyOpInterface op = kernel.getCompute();
  if (!op)
    return kernel.emitOpError("expects its tiled form, attn.flash; run attn-tile-flash first");
  return op->emitOpError("(the ")
         << op.getFamily() << " kernel family) has no lowering in the " << backend
         << " backend for target " << target;
}

LLVM::GlobalOp mlir::attn::addStringGlobal(OpBuilder &b, Location loc, StringRef symbol,
                                           StringRef text) {
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), text.size() + 1);
  return LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true, LLVM::Linkage::Private,
                                symbol, b.getStringAttr(text.str() + '\0'));
}

Value mlir::attn::stackArray(OpBuilder &b, Location loc, ValueRange values) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  if (values.empty())
    return LLVM::ZeroOp::create(b, loc, ptr);
  Value count =
      LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(values.size()));
  Value array = LLVM::AllocaOp::create(b, loc, ptr, ptr, count);
  for (auto [i, value] : llvm::enumerate(values)) {
    Value at = LLVM::GEPOp::create(b, loc, ptr, ptr, array, ArrayRef<LLVM::GEPArg>{int32_t(i)});
    LLVM::StoreOp::create(b, loc, value, at);
  }
  return array;
}
