//===- HostTensor.h - dense host tensors for the reference path -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A row-major tensor whose values are held in double whatever their storage
// type, so the reference evaluator can accumulate in double; the storage type
// says how values round and how they are written to .npy.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_REFERENCE_HOSTTENSOR_H
#define ATTNC_REFERENCE_HOSTTENSOR_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnc {

/// Storage types: the kernels' float types, and i32 for the int32 inputs mods
/// read (held exactly as doubles).
enum class ElementType { f32, f16, bf16, i32 };

/// "[2, 8, 128, 64]"
std::string shapeString(llvm::ArrayRef<int64_t> shape);

llvm::StringRef toString(ElementType type);
std::optional<ElementType> elementTypeOf(mlir::Type type);
/// Rounds `value` to the nearest value representable in `type`.
double roundTo(ElementType type, double value);

struct HostTensor {
  ElementType type = ElementType::f32;
  llvm::SmallVector<int64_t, 4> shape;
  std::vector<double> data;

  HostTensor() = default;
  HostTensor(ElementType type, llvm::ArrayRef<int64_t> shape);

  int64_t numElements() const { return data.size(); }
  bool empty() const { return shape.empty(); }
  std::string shapeString() const { return attnc::shapeString(shape); }
};

/// max |x| over the tensor's values (0 when empty).
double largestMagnitude(const HostTensor &t);

/// Uniform values in [-1, 1) from a splitmix64 stream started at `seed`,
/// rounded to `type`. Same seed, same tensor, on every machine.
HostTensor randomTensor(ElementType type, llvm::ArrayRef<int64_t> shape,
                        uint64_t seed);

} // namespace attnc

#endif // ATTNC_REFERENCE_HOSTTENSOR_H
