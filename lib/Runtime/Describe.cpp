//===- Describe.cpp - Words for the runtime's error messages --------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Describe.h"

using namespace attnc::rt;

std::string attnc::rt::formatDims(const int64_t *dims, int ndim) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

const char *attnc::rt::deviceName(int deviceType) {
  switch (deviceType) {
  case kDLCPU:
    return "kDLCPU";
  case kDLCUDA:
    return "kDLCUDA";
  case kDLCUDAHost:
    return "kDLCUDAHost";
  case kDLOpenCL:
    return "kDLOpenCL";
  case kDLVulkan:
    return "kDLVulkan";
  case kDLMetal:
    return "kDLMetal";
  case kDLVPI:
    return "kDLVPI";
  case kDLROCM:
    return "kDLROCM";
  case kDLROCMHost:
    return "kDLROCMHost";
  case kDLExtDev:
    return "kDLExtDev";
  case kDLCUDAManaged:
    return "kDLCUDAManaged";
  default:
    return "an unknown device type";
  }
}

const char *attnc::rt::deviceNoun(int deviceType) {
  return deviceType == kDLCPU ? "CPU" : deviceName(deviceType);
}

const char *attnc::rt::dtypeCodeName(int code) {
  switch (code) {
  case kDLInt:
    return "kDLInt";
  case kDLUInt:
    return "kDLUInt";
  case kDLFloat:
    return "kDLFloat";
  case kDLOpaqueHandle:
    return "kDLOpaqueHandle";
  case kDLBfloat:
    return "kDLBfloat";
  case kDLComplex:
    return "kDLComplex";
  default:
    return "an unknown type code";
  }
}

static const char *codeName(uint8_t code) {
  switch (code) {
  case kDLInt:
    return "int";
  case kDLUInt:
    return "uint";
  case kDLFloat:
    return "float";
  case kDLBfloat:
    return "bfloat";
  case kDLComplex:
    return "complex";
  default:
    return nullptr;
  }
}

std::string attnc::rt::dtypeName(DLDataType type) {
  const char *code = codeName(type.code);
  std::string s = code ? cat(code, unsigned(type.bits))
                       : cat("type code ", unsigned(type.code), " of ",
                             unsigned(type.bits), " bits");
  return type.lanes == 1 ? s : cat(s, " x ", type.lanes, " lanes");
}
