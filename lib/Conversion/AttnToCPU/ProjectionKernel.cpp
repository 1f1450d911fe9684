//===- ProjectionKernel.cpp - attn.projection to a CPU tile function ------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A projection kernel's one phase (KernelInterface.h, projectionInterface):
// item (b, m, n) is the 256 x 64 tile (rows [256 m, 256 m + 256), columns
// [64 n, 64 n + 64)) of y = x W^T + bias, ProductBuilder's product
// (ProjectionProduct.h), the multi-head attention's projections' code.
//
//===----------------------------------------------------------------------===//

#include "ProjectionProduct.h"
#include "attnc/Conversion/Common/KernelEntry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::cpu;

namespace {

class ProjectionKernelBuilder : ProductBuilder {
public:
  ProjectionKernelBuilder(ProjectionOp op, const CpuKernelConfig &config,
                          ImplicitLocOpBuilder &b)
      : ProductBuilder(b, config, op.isOnnx()), op(op) {}

  void build(func::FuncOp func);

private:
  ProjectionOp op;
};

/// Item (b, m, n): args x, weight, bias, y, params, then the coordinates.
void ProjectionKernelBuilder::build(func::FuncOp func) {
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  ArrayRef<BlockArgument> args = entry->getArguments();
  params = args[4];
  Value batch = args[5], m0 = mul(args[6], idx(kProductRows));
  Value col0 = mul(args[7], idx(kProductTile));
  Value seq = readParam(ATTNC_P_PROJ_SEQ);
  Value xB = readParam(ATTNC_P_PROJ_X_STRIDES), xS = readParam(ATTNC_P_PROJ_X_STRIDES + 1);
  Value yB = readParam(ATTNC_P_PROJ_Y_STRIDES), yS = readParam(ATTNC_P_PROJ_Y_STRIDES + 1);
  ProductTile t;
  t.aBuf = args[0], t.aBase = add(mul(batch, xB), mul(m0, xS)), t.aStride = xS;
  t.k = op.getIn();
  t.rows = minIdx(idx(kProductRows), arith::SubIOp::create(b, seq, m0));
  t.wBuf = args[1], t.wStride = readParam(ATTNC_P_PROJ_WEIGHT_STRIDES), t.wCol0 = col0;
  t.cols = minIdx(idx(kProductTile), arith::SubIOp::create(b, idx(op.getOut()), col0));
  t.biasBuf = args[2], t.biasStride = readParam(ATTNC_P_PROJ_BIAS_STRIDES);
  t.dest = args[3], t.destBase = add(add(mul(batch, yB), mul(m0, yS)), col0), t.destStride = yS;
  product(t);
  func::ReturnOp::create(b, ValueRange{arith::ConstantIntOp::create(b, 0, 32)});
}

} // namespace

LogicalResult mlir::attn::buildCpuProjectionKernel(ProjectionOp op,
                                                   const CpuKernelConfig &config) {
  auto kernel = cast<KernelOp>(op->getParentOp());
  ImplicitLocOpBuilder b(kernel.getLoc(), kernel.getContext());
  b.setInsertionPoint(kernel);
  Type elemBuf = MemRefType::get({ShapedType::kDynamic}, op.getDtype());
  SmallVector<Type> args(4, elemBuf);
  args.push_back(MemRefType::get({ShapedType::kDynamic}, b.getI64Type()));
  ImplicitLocOpBuilder body(op.getLoc(), kernel.getContext());
  ProjectionKernelBuilder(op, config, body).build(createTileFunction(b, kernel, args, "", 3));
  return success();
}
