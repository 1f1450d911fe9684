//===- LowerFlashToHalideCall.cpp - attn-lower-flash-to-halide-call -------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Each attn.kernel becomes
//
//   llvm.func @_mlir_ciface_<name>_tile(q, k, v, out, lse, inputs..., params: ptr,
//                                      b, h, q_tile: i64) -> i32 {
//     return attnc_rt_halide_tile(@<name>_halide_argv, q, k, v, out, lse, params,
//                                 b, h, q_tile, block_q, head_dim, group,
//                                 element_bytes, dlpack_dtype_code,
//                                 [inputs...], @<name>_inputs)
//   }
//
// where the mod inputs (a spec's `inputs`) go as an array of their views
// and a table of their shapes (lib/Runtime/HalideTile.cpp reads it), both
// null without inputs;
// on a CPU target, or on a GPU target (the whole tensors in one call)
//
//   llvm.func @_mlir_ciface_<name>_grid(q, k, v, out, lse, inputs...,
//                                      params: ptr, batch, device_id: i64,
//                                      stream: ptr) -> i32 {
//     return attnc_rt_halide_grid(@<name>_halide_argv, interface, q, k, v, out,
//                                 lse, params, batch, device_id, stream, heads,
//                                 kv_heads, head_dim, element_bytes,
//                                 dlpack_dtype_code, outputs_lse,
//                                 [inputs...], @<name>_inputs)
//   }
//
// where interface is halide_cuda_device_interface() (cuda) or null (opencl:
// host tensors), with @<name>_halide declared here and defined by the object
// Halide compiles from the same attn.flash (lib/Target/Halide).
//
// A projection kernel (attn.projection, CPU targets) becomes
//
//   llvm.func @_mlir_ciface_<name>_tile(x, weight, bias, y, params: ptr,
//                                      b, m, n: i64) -> i32 {
//     return attnc_rt_halide_projection(@<name>_halide, x, weight, bias, y,
//                                       params, b, m, n, in_features,
//                                       out_features, element_bytes,
//                                       dlpack_dtype_code, matmul_weights,
//                                       item_rows, item_cols, block_rows)
//   }
//
// A linear attention kernel (attn.linear_attention, CPU targets) becomes a
// tile function per phase of its family, each
//
//   llvm.func @_mlir_ciface_<name>[_attention]_tile(q, k, v, out, t4..t7,
//                                      params: ptr, coordinates: i64) -> i32 {
//     return attnc_rt_halide_linear(@<name>_halide, @<name>_halide_state,
//                                   q, k, v, out, t4..t7 (null past the
//                                   kernel's), params, c0, c1, c2, phase,
//                                   heads, kv_heads, head_dim, value_dim,
//                                   element_bytes, dlpack_dtype_code, rows,
//                                   state_rows, block_rows, carry)
//   }
//
//===----------------------------------------------------------------------===//

#include "attnc/Conversion/AttnToHalide/LinearProblemFromOp.h"
#include "attnc/Conversion/Common/KernelEntry.h"
#include "attnc/Dialect/Attn/ModInputs.h"
#include "attnc/Interface/KernelInterface.h"
#include "attnc/Runtime/attnc_runtime.h"
#include "attnc/Target/Halide/LinearPipeline.h"
#include "attnc/Target/Halide/ProjectionPipeline.h"
#include "attnc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERFLASHTOHALIDECALLPASS
#include "Attn/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

constexpr StringLiteral kAdapter = "attnc_rt_halide_tile";
constexpr StringLiteral kGridAdapter = "attnc_rt_halide_grid";
constexpr StringLiteral kProjectionAdapter = "attnc_rt_halide_projection";
constexpr StringLiteral kLinearAdapter = "attnc_rt_halide_linear";
constexpr StringLiteral kCudaInterface = "halide_cuda_device_interface";

/// Declares `name` with `type` unless the module has it.
void declare(OpBuilder &b, ModuleOp module, StringRef name, LLVM::LLVMFunctionType type) {
  if (!SymbolTable::lookupSymbolIn(module, name))
    LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// The constants every adapter takes after its own arguments.
void appendConstants(OpBuilder &b, Location loc, ArrayRef<int64_t> values,
                     SmallVectorImpl<Value> &args) {
  for (int64_t c : values)
    args.push_back(LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(c)));
}

std::pair<int64_t, int64_t> elementFacts(Type elem) {
  return {elem.getIntOrFloatBitWidth() / 8, elem.isBF16() ? kDLBfloat : kDLFloat};
}

/// attnc_rt_halide_tile's table of the mod inputs: their count, the param
/// of the first one's first stride, then per input its DLPack type code, rank
/// and per dim (param, scale, offset): the extent is max(scale * p[param] +
/// offset, 0), param -1 for none (a dim the spec fixes).
SmallVector<int64_t> inputTable(FlashOp op) {
  ArrayAttr inputs = op.getInputsAttr();
  int64_t batch = attnc::modInputBatchParam(0); // the Halide backend has no weights
  SmallVector<int64_t> table{int64_t(inputs.size()), batch + 1};
  for (auto decl : inputs.getAsRange<ModInputAttr>()) {
    table.push_back(decl.getElementType().isInteger() ? kDLInt : kDLFloat);
    table.push_back(int64_t(decl.getDims().size()));
    for (StringRef text : decl.getDims().getAsValueRange<StringAttr>()) {
      DimExpr d = *parseDimExpr(text); // verified
      if (std::optional<int64_t> fixed = staticExtent(op, d)) {
        table.append({-1, 0, *fixed});
        continue;
      }
      int64_t param = d.symbol == "batch"   ? batch
                      : d.symbol == "seq_q" ? int64_t(ATTNC_P_SEQ_Q)
                                            : int64_t(ATTNC_P_SEQ_KV);
      table.append({param, d.scale, d.offset});
    }
  }
  return table;
}

/// The mod inputs' views as an array on the stack, and their table.
std::pair<Value, Value> inputArguments(OpBuilder &b, ModuleOp module, FlashOp op,
                                       StringRef name, ValueRange views) {
  Location loc = op.getLoc();
  Value array = stackArray(b, loc, views);
  if (views.empty())
    return {array, array};
  SmallVector<int64_t> table = inputTable(op);
  auto tableType = LLVM::LLVMArrayType::get(b.getI64Type(), table.size());
  std::string symbol = (name + "_inputs").str();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    LLVM::GlobalOp::create(b, loc, tableType, /*isConstant=*/true, LLVM::Linkage::Private,
                           symbol, b.getI64TensorAttr(table));
  }
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  return {array, LLVM::AddressOfOp::create(b, loc, ptr, symbol)};
}

/// The tile function _mlir_ciface_<name>[_<phase>]_tile(`pointers` views and
/// params: ptr, the item's `coords` coordinates: i64) -> i32; its entry block.
Block *tileThunk(OpBuilder &b, Location loc, StringRef name, size_t pointers,
                 StringRef phase = "", unsigned coords = 3) {
  SmallVector<Type> args(pointers, LLVM::LLVMPointerType::get(b.getContext()));
  args.append(coords, b.getI64Type());
  auto tile = LLVM::LLVMFuncOp::create(
      b, loc, cInterfaceName(phaseFunctionName(name, "tile", phase)),
      LLVM::LLVMFunctionType::get(b.getI32Type(), args));
  return tile.addEntryBlock(b);
}

void emitTileThunk(OpBuilder &b, ModuleOp module, FlashOp op, StringRef name) {
  MLIRContext *ctx = b.getContext();
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i32 = b.getI32Type(), i64 = b.getI64Type();
  // The argv form: one signature whatever inputs the pipeline takes.
  std::string pipeline = (name + "_halide_argv").str();
  declare(b, module, pipeline, LLVM::LLVMFunctionType::get(i32, {ptr}));
  SmallVector<Type> adapterArgs(7, ptr);
  adapterArgs.append(8, i64);
  adapterArgs.append(2, ptr);
  auto adapterType = LLVM::LLVMFunctionType::get(i32, adapterArgs);
  declare(b, module, kAdapter, adapterType);

  size_t inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  OpBuilder::InsertionGuard guard(b);
  Block *body = tileThunk(b, loc, name, 6 + inputs);
  b.setInsertionPointToStart(body);
  ValueRange views = body->getArguments();
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, pipeline)};
  llvm::append_range(args, views.take_front(5));
  llvm::append_range(args, views.drop_front(5 + inputs)); // params, b, h, q_tile
  auto [elemBytes, dtypeCode] = elementFacts(op.getDtype());
  appendConstants(b, loc,
                  {op.getTileQ(), op.getDim(), op.getHeads() / op.getKvHeads(), elemBytes,
                   dtypeCode},
                  args);
  auto [array, table] = inputArguments(b, module, op, name, views.slice(5, inputs));
  args.append({array, table});
  auto call = LLVM::CallOp::create(b, loc, adapterType, kAdapter, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

void emitGridThunk(OpBuilder &b, ModuleOp module, FlashOp op, StringRef name, bool cuda) {
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext()), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  // The argv form: one signature whatever inputs and outputs the pipeline has.
  std::string pipeline = (name + "_halide_argv").str();
  declare(b, module, pipeline, LLVM::LLVMFunctionType::get(i32, {ptr}));
  SmallVector<Type> adapterArgs(8, ptr);
  adapterArgs.append({i64, i64, ptr});
  adapterArgs.append(6, i64);
  adapterArgs.append(2, ptr);
  auto adapterType = LLVM::LLVMFunctionType::get(i32, adapterArgs);
  declare(b, module, kGridAdapter, adapterType);
  auto interfaceType = LLVM::LLVMFunctionType::get(ptr, {});
  if (cuda)
    declare(b, module, kCudaInterface, interfaceType);

  size_t inputs = op.getInputsAttr() ? op.getInputsAttr().size() : 0;
  SmallVector<Type> gridArgs(6 + inputs, ptr);
  gridArgs.append({i64, i64, ptr});
  auto grid = LLVM::LLVMFuncOp::create(b, loc, cInterfaceName(phaseFunctionName(name, "grid")),
                                       LLVM::LLVMFunctionType::get(i32, gridArgs));
  OpBuilder::InsertionGuard guard(b);
  Block *body = grid.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  Value interface = cuda ? LLVM::CallOp::create(b, loc, interfaceType, kCudaInterface,
                                                ValueRange{})
                               .getResult()
                         : LLVM::ZeroOp::create(b, loc, ptr).getResult();
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, pipeline), interface};
  ValueRange views = body->getArguments();
  llvm::append_range(args, views.take_front(5));
  llvm::append_range(args, views.drop_front(5 + inputs)); // params, batch, device, stream
  auto [elemBytes, dtypeCode] = elementFacts(op.getDtype());
  bool lse = op.hasOutput(OutputKind::lse);
  appendConstants(b, loc,
                  {op.getHeads(), op.getKvHeads(), op.getDim(), elemBytes, dtypeCode, lse},
                  args);
  auto [array, table] = inputArguments(b, module, op, name, views.slice(5, inputs));
  args.append({array, table});
  auto call = LLVM::CallOp::create(b, loc, adapterType, kGridAdapter, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

void emitProjectionThunk(OpBuilder &b, ModuleOp module, ProjectionOp op, StringRef name) {
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext()), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  std::string pipeline = (name + "_halide").str();
  declare(b, module, pipeline, LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(4, ptr)));
  SmallVector<Type> adapterArgs(6, ptr);
  adapterArgs.append(11, i64);
  auto adapterType = LLVM::LLVMFunctionType::get(i32, adapterArgs);
  declare(b, module, kProjectionAdapter, adapterType);
  OpBuilder::InsertionGuard guard(b);
  Block *body = tileThunk(b, loc, name, 5);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, pipeline)};
  llvm::append_range(args, body->getArguments());
  auto [elemBytes, dtypeCode] = elementFacts(op.getDtype());
  appendConstants(b, loc,
                  {op.getIn(), op.getOut(), elemBytes, dtypeCode, op.isOnnx(),
                   attnc::kProjectionRows, attnc::kProjectionTile,
                   attnc::halide::kProjectionBlockRows},
                  args);
  auto call = LLVM::CallOp::create(b, loc, adapterType, kProjectionAdapter, args);
  LLVM::ReturnOp::create(b, loc, call.getResult());
}

/// One tile function per phase of the linear attention family
/// (linearInterface): causal, "attention" over (b, g); non-causal, "state"
/// over (b, g) and "attention" over (b, h, q_tile). Each forwards its views
/// (null past the kernel's), params and coordinates (0 past the phase's) to
/// attnc_rt_halide_linear with the phase's number and the kernel's facts.
void emitLinearThunks(OpBuilder &b, ModuleOp module, LinearAttentionOp op, StringRef name) {
  Location loc = op.getLoc();
  Type ptr = LLVM::LLVMPointerType::get(b.getContext()), i32 = b.getI32Type(),
       i64 = b.getI64Type();
  bool causal = op.getCausal(), carry = op.getCarryState();
  std::string rows = (name + "_halide").str(), state = (name + "_halide_state").str();
  declare(b, module, rows,
          LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(causal ? 6 : 4, ptr)));
  declare(b, module, state, LLVM::LLVMFunctionType::get(i32, SmallVector<Type>(6, ptr)));
  SmallVector<Type> adapterArgs(11, ptr);
  adapterArgs.append(14, i64);
  auto adapterType = LLVM::LLVMFunctionType::get(i32, adapterArgs);
  declare(b, module, kLinearAdapter, adapterType);

  const size_t views = causal ? (carry ? 8 : 4) : 6;
  std::pair<int64_t, int64_t> elem = elementFacts(op.getDtype());
  int64_t chunk = linearRows(op);
  auto emitPhase = [&](int64_t phase, StringRef phaseName, unsigned coords) {
    OpBuilder::InsertionGuard guard(b);
    Block *body = tileThunk(b, loc, name, views + 1, phaseName, coords);
    b.setInsertionPointToStart(body);
    ValueRange in = body->getArguments();
    Value null = LLVM::ZeroOp::create(b, loc, ptr);
    SmallVector<Value> args{LLVM::AddressOfOp::create(b, loc, ptr, rows),
                            LLVM::AddressOfOp::create(b, loc, ptr, state)};
    llvm::append_range(args, in.take_front(views));
    args.append(8 - views, null);
    args.push_back(in[views]); // params
    llvm::append_range(args, in.drop_front(views + 1));
    appendConstants(b, loc, SmallVector<int64_t>(3 - coords, 0), args);
    appendConstants(b, loc,
                    {phase, op.getHeads(), op.getKvHeads(), op.getDim(),
                     op.getValueDimOrDefault(), elem.first, elem.second, chunk,
                     attnc::halide::kLinearStateRows, attnc::halide::kLinearBlockRows, carry},
                    args);
    auto call = LLVM::CallOp::create(b, loc, adapterType, kLinearAdapter, args);
    LLVM::ReturnOp::create(b, loc, call.getResult());
  };
  if (causal) {
    emitPhase(2, "", 2);
    return;
  }
  emitPhase(0, "", 2);
  emitPhase(1, "attention", 3);
}

struct AttnLowerFlashToHalideCallPass
    : public mlir::attn::impl::AttnLowerFlashToHalideCallPassBase<
          AttnLowerFlashToHalideCallPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (device != "cpu" && device != "cuda" && device != "opencl") {
      module.emitError("attn-lower-flash-to-halide-call: device '")
          << device << "' is none of cpu, cuda and opencl";
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Attribute> kernels;
    for (KernelOp kernel : llvm::make_early_inc_range(module.getOps<KernelOp>())) {
      Operation *compute = kernel.getCompute();
      // The CPU-only families: refused on a device, else their tile functions.
      auto cpuOnly = [&](auto op, auto emitThunks) -> LogicalResult {
        if (device != "cpu")
          return op.emitOpError("is built by the Halide backend on CPU targets only, not "
                                "for device ")
                 << device;
        emitThunks(b, module, op, kernel.getSymName());
        kernels.push_back(op.describeEntry(kernel.getSymName(), kDLCPU));
        kernel.erase();
        return success();
      };
      if (isa_and_nonnull<ProjectionOp, LinearAttentionOp>(compute)) {
        LogicalResult lowered =
            isa<ProjectionOp>(compute)
                ? cpuOnly(cast<ProjectionOp>(compute), emitProjectionThunk)
                : cpuOnly(cast<LinearAttentionOp>(compute), emitLinearThunks);
        if (failed(lowered))
          return signalPassFailure();
        continue;
      }
      FailureOr<FlashOp> flash = flashToLower(kernel, "Halide", device);
      if (failed(flash))
        return signalPassFailure();
      FlashOp op = *flash;
      std::optional<int64_t> deviceType; // a tile function runs on the CPU
      if (device == "cpu") {
        emitTileThunk(b, module, op, kernel.getSymName());
      } else {
        emitGridThunk(b, module, op, kernel.getSymName(), device == "cuda");
        deviceType = device == "cuda" ? kDLCUDA : kDLCPU;
      }
      kernels.push_back(op.describeEntry(kernel.getSymName(), deviceType.value_or(kDLCPU)));
      kernel.erase();
    }
    module->setAttr(kKernelEntriesAttr, ArrayAttr::get(&getContext(), kernels));
  }
};

} // namespace
