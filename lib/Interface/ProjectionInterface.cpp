//===- ProjectionInterface.cpp - The projection family's interface --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Interface/KernelInterface.h"

#include "TensorSpecs.h"

using namespace attnc;

KernelInterface attnc::projectionInterface(const ProjectionFacts &f) {
  KernelInterface in;
  in.numArgs = 4;
  in.numParams = ATTNC_P_PROJECTION_COUNT;
  in.symbols = {{"batch"},
                {"seq", -1, 0, ATTNC_P_PROJ_SEQ},
                {"in_features", f.in},
                {"out_features", f.out},
                {"block_m", kProjectionRows},
                {"out_tiles", (f.out + kProjectionTile - 1) / kProjectionTile}};
  int32_t unit = ATTNC_TENSOR_UNIT_INNER, code = f.dtypeCode, bits = f.dtypeBits;
  auto tensor = [&](const char *name, const char *dims, const char *strides, int32_t arg,
                    int32_t flags, int32_t param) {
    return dimsTensor(name, dims, strides, arg, flags, code, bits, param);
  };
  in.tensors = {
      tensor("x", "batch,seq,in_features", "batch,seq", 0, unit, ATTNC_P_PROJ_X_STRIDES),
      f.onnx ? tensor("weight", "in_features,out_features", "in_features", 1, unit,
                      ATTNC_P_PROJ_WEIGHT_STRIDES)
             : tensor("weight", "out_features,in_features", "out_features", 1, unit,
                      ATTNC_P_PROJ_WEIGHT_STRIDES),
      tensor("bias", "out_features", "out_features", 2, ATTNC_TENSOR_OPTIONAL,
             ATTNC_P_PROJ_BIAS_STRIDES),
      tensor("y", "batch,seq,out_features", "batch,seq", 3, unit | ATTNC_TENSOR_OUTPUT,
             ATTNC_P_PROJ_Y_STRIDES)};
  in.phases = {{"project", "batch,seq/block_m,out_tiles", "b,m,n"}};
  return in;
}
