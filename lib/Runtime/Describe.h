//===- Describe.h - Words for the runtime's error messages ------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Private to lib/Runtime: how shapes, devices and dtypes are spelled in
// messages. DLPack's own names (kDLCUDA, ...) are used, since those are what a
// user can look up.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_RUNTIME_DESCRIBE_H
#define ATTNC_LIB_RUNTIME_DESCRIBE_H

#include <dlpack/dlpack.h>

#include <cstdint>
#include <sstream>
#include <string>

namespace attnc::rt {

/// Concatenates anything ostream can print.
template <typename... Args> std::string cat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

/// "[2, 8, 128, 64]".
std::string formatDims(const int64_t *dims, int ndim);

/// "kDLCUDA", or "an unknown device type".
const char *deviceName(int deviceType);

/// "CPU" for kDLCPU, else deviceName: what a message calls a tensor there.
const char *deviceNoun(int deviceType);

/// "kDLFloat", "kDLBfloat", ..., or "an unknown type code".
const char *dtypeCodeName(int code);

/// "float32", "int8", "float32 x 4 lanes", or "type code 9 of 32 bits".
std::string dtypeName(DLDataType type);

} // namespace attnc::rt

#endif // ATTNC_LIB_RUNTIME_DESCRIBE_H
