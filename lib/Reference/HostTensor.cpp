//===- HostTensor.cpp - dense host tensors for the reference path --------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Reference/HostTensor.h"
#include "attnc/Support/SplitMix64.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace attnc;

llvm::StringRef attnc::toString(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return "f32";
  case ElementType::f16:
    return "f16";
  case ElementType::bf16:
    return "bf16";
  case ElementType::i32:
    return "i32";
  }
  llvm_unreachable("unknown element type");
}

std::optional<ElementType> attnc::elementTypeOf(mlir::Type type) {
  if (type.isF32())
    return ElementType::f32;
  if (type.isF16())
    return ElementType::f16;
  if (type.isBF16())
    return ElementType::bf16;
  if (type.isInteger(32))
    return ElementType::i32;
  return std::nullopt;
}

static const llvm::fltSemantics &semanticsOf(ElementType type) {
  switch (type) {
  case ElementType::f32:
    return llvm::APFloat::IEEEsingle();
  case ElementType::f16:
    return llvm::APFloat::IEEEhalf();
  case ElementType::bf16:
  case ElementType::i32:
    return llvm::APFloat::BFloat();
  }
  llvm_unreachable("unknown element type");
}

double attnc::roundTo(ElementType type, double value) {
  if (type == ElementType::f32)
    return static_cast<float>(value);
  if (type == ElementType::i32) // truncated toward zero and kept in range, as a cast does
    return double(int32_t(std::clamp(value, -2147483648.0, 2147483647.0)));
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(semanticsOf(type), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return f.convertToDouble();
}

HostTensor::HostTensor(ElementType type, llvm::ArrayRef<int64_t> shape)
    : type(type), shape(shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  data.assign(n, 0.0);
}

std::string attnc::shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

HostTensor attnc::randomTensor(ElementType type, llvm::ArrayRef<int64_t> shape,
                               uint64_t seed) {
  HostTensor t(type, shape);
  for (auto [i, x] : llvm::enumerate(t.data)) {
    uint64_t z = splitmix64(seed + i);
    double unit = static_cast<double>(z >> 11) * 0x1.0p-53; // [0, 1)
    x = roundTo(type, 2.0 * unit - 1.0);
  }
  return t;
}
