//===- EntryFacts.h - the facts attention families' entries share -*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the attention family's and the attention backward family's entries
// (attn.cpu_kernels) both record and read back: heads, head_dim, dtype,
// layout, block_q and the length bounds. Private to lib/Dialect/Attn.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_LIB_DIALECT_ATTN_ENTRYFACTS_H
#define ATTNC_LIB_DIALECT_ATTN_ENTRYFACTS_H

#include "attnc/Dialect/Attn/AttnOps.h"
#include "attnc/Interface/KernelInterface.h"

namespace mlir::attn {

/// name, op, num_heads, num_kv_heads, head_dim, dtype, layout, block_q,
/// max_seq_q / max_seq_kv (max_seq and the block layout's cover; 0:
/// unbounded) and the mods' inputs of the kernel `name` of `op`.
NamedAttrList commonEntryFacts(AttentionSpecOpInterface op, StringRef name, int64_t blockQ);

/// "attn-emit-cpu-entry: kernel 'NAME': ", the start of an error about `entry`.
InFlightDiagnostic entryError(Location loc, DictionaryAttr entry);

/// Reads the integers `ints` (name, where it goes) of `entry`; an error from
/// `fail` naming the one missing.
using EntryError = llvm::function_ref<InFlightDiagnostic()>;
LogicalResult readEntryInts(DictionaryAttr entry,
                            ArrayRef<std::pair<StringRef, int64_t *>> ints, EntryError fail);

/// `layout` (0 bhsd, 1 bshd) and `dtype` (f32, f16, bf16, as a DLPack code
/// and bits) of `entry`.
LogicalResult readLayoutAndDtype(DictionaryAttr entry, EntryError fail, int32_t &layout,
                                 int32_t &dtypeCode, int32_t &dtypeBits);

/// The facts commonEntryFacts wrote (heads, head_dim, block_q, bounds,
/// layout, dtype, inputs) into `f`.
LogicalResult readCommonEntry(DictionaryAttr entry, EntryError fail, attnc::AttentionFacts &f);

} // namespace mlir::attn

#endif // ATTNC_LIB_DIALECT_ATTN_ENTRYFACTS_H
