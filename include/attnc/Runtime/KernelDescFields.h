//===- KernelDescFields.h - attnc_kernel_desc as a table --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// ATTNC_KERNEL_DESC_FIELDS (attnc_runtime.h) and the lists of its tables'
// entries expanded into constexpr tables
// of {name, kind}, for C++ that writes descriptors without the C struct at
// hand: attn-emit-cpu-entry builds the LLVM struct from it and fills each
// field by name. The kind is derived from the field's C type, never written
// down a second time, so the table cannot drift from the struct. Plain C++17
// without LLVM, so the runtime's unit tests can check it against offsetof.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_RUNTIME_KERNELDESCFIELDS_H
#define ATTNC_RUNTIME_KERNELDESCFIELDS_H

#include "attnc/Runtime/attnc_runtime.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace attnc {

/// How a descriptor field is laid out: the LLVM types i32, i64 and ptr.
enum class DescFieldKind { I32, I64, Ptr };

template <typename T> constexpr DescFieldKind descFieldKind() {
  if constexpr (std::is_pointer_v<T>) {
    return DescFieldKind::Ptr;
  } else {
    // A new field of another type needs a new kind here and in the
    // descriptor writers.
    static_assert(std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>,
                  "attnc_kernel_desc fields are int32_t, int64_t or pointers");
    return std::is_same_v<T, int32_t> ? DescFieldKind::I32 : DescFieldKind::I64;
  }
}

struct DescField {
  const char *name;
  DescFieldKind kind;
};

#define ATTNC_DESC_FIELD_ENTRY_(type, field) {#field, descFieldKind<type>()},

/// attnc_kernel_desc's fields, in struct order.
inline constexpr DescField kKernelDescFields[] = {
    ATTNC_KERNEL_DESC_FIELDS(ATTNC_DESC_FIELD_ENTRY_)};
/// The fields of the descriptor's tables' entries, in struct order.
inline constexpr DescField kSymbolDescFields[] = {
    ATTNC_SYMBOL_DESC_FIELDS(ATTNC_DESC_FIELD_ENTRY_)};
inline constexpr DescField kTensorDescFields[] = {
    ATTNC_TENSOR_DESC_FIELDS(ATTNC_DESC_FIELD_ENTRY_)};
inline constexpr DescField kPhaseDescFields[] = {
    ATTNC_PHASE_DESC_FIELDS(ATTNC_DESC_FIELD_ENTRY_)};

#undef ATTNC_DESC_FIELD_ENTRY_

} // namespace attnc

#endif // ATTNC_RUNTIME_KERNELDESCFIELDS_H
