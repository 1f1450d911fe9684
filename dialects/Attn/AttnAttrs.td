//===- AttnAttrs.td - mask attributes of the attn dialect --*- tablegen -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Masks are attributes implementing MaskAttrInterface. Each one only translates
// itself into the plain-data rule of include/attnc/Support/MaskRules.h
// (toMaskRule); what a rule keeps, per element and per tile, is stated once
// there, so the reference evaluator and the kernels' tile classifier agree.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "AttnBase.td"
include "AttnEnums.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Attn_MaskAttrInterface : AttrInterface<"MaskAttrInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    A mask: which (query, key) pairs attend, as a pure function of the two positions and the
    run-time sequence lengths. Masks never depend on batch or head; per-head masks are written
    as a `mask_mod` region.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the mask as plain data for the rules in attnc/Support/MaskRules.h, the only
        statement of what each mask keeps.
      }], "::attnc::mask::Mask", "toMaskRule">,
    InterfaceMethod<[{
        Returns true when query row `q` attends key row `kv` for sequences of length `seqQ`
        and `seqKv` (0 <= q < seqQ, 0 <= kv < seqKv).
      }], "bool", "isKept",
      (ins "int64_t":$q, "int64_t":$kv, "int64_t":$seqQ, "int64_t":$seqKv), [{}], [{
        return ::attnc::mask::isKept($_attr.toMaskRule(), q, kv, seqQ, seqKv);
      }]>,
    InterfaceMethod<[{
        Returns whether the mask keeps all, some or none of a tile (bounds clipped to the
        sequence lengths); the per-element answer is this rule on a 1 x 1 tile.
      }], "::attnc::mask::TileClass", "classifyTile",
      (ins "const ::attnc::mask::TileBounds<int64_t> &":$tile), [{}], [{
        return ::attnc::mask::classifyTile($_attr.toMaskRule(), /*hasMaskMod=*/false, tile);
      }]>
  ];
}

class Attn_MaskAttr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name,
              !listconcat(traits, [DeclareAttrInterfaceMethods<Attn_MaskAttrInterface>])> {
  let mnemonic = attrMnemonic;
}

def Attn_FullMaskAttr : Attn_MaskAttr<"FullMask", "full"> {
  let summary = "every query attends every key";
  let description = [{
    Dense attention, no mask.

    Example: `mask = #attn.full`
  }];
}

def Attn_CausalMaskAttr : Attn_MaskAttr<"CausalMask", "causal"> {
  let summary = "query i attends keys up to its own aligned position";
  let description = [{
    Keeps `(i, j)` when `j <= i + offset`, with `offset = 0` for `top_left` and
    `offset = seq_kv - seq_q` for `bottom_right` alignment. `attn-normalize` rewrites it as
    `#attn.sliding_window<left = inf, right = 0>` with the same alignment.

    Example: `mask = #attn.causal<bottom_right>`
  }];
  let parameters = (ins EnumParameter<Attn_Alignment>:$alignment);
  // custom: a misspelt alignment is one error, not one more for the parameter.
  let assemblyFormat = "`<` custom<Alignment>($alignment) `>`";
}

def Attn_SlidingWindowMaskAttr : Attn_MaskAttr<"SlidingWindowMask", "sliding_window"> {
  let summary = "query i attends keys within [i - left, i + right] of its aligned position";
  let description = [{
    Keeps `(i, j)` when `i + offset - left <= j <= i + offset + right`, where `offset` is 0
    for `align = top_left` (the default) and `seq_kv - seq_q` for `align = bottom_right`.
    Either bound may be `inf` (unbounded). Mistral-style sliding window attention is
    `left = W - 1, right = 0`; a window with both bounds `inf` is `#attn.full`.

    Example: `mask = #attn.sliding_window<left = 4095, right = 0, align = bottom_right>`
  }];
  let parameters = (ins
    "int64_t":$left,
    "int64_t":$right,
    DefaultValuedParameter<"::mlir::attn::Alignment",
                           "::mlir::attn::Alignment::top_left">:$alignment);
  let assemblyFormat = [{
    `<` `left` `=` custom<WindowBound>($left) `,` `right` `=` custom<WindowBound>($right)
        (`,` `align` `=` $alignment^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isLeftUnbounded() const { return getLeft() == ::mlir::attn::kUnbounded; }
    bool isRightUnbounded() const { return getRight() == ::mlir::attn::kUnbounded; }
  }];
}

def Attn_BlockSparseMaskAttr : Attn_MaskAttr<"BlockSparseMask", "block_sparse"> {
  let summary = "an explicit block layout: which (query block, key block) pairs attend";
  let description = [{
    Position `(i, j)` belongs to block `(i / block_q, j / block_kv)`; it is kept when that
    entry of `layout` is 1. `layout` has one row per query block, all rows the same length
    (one entry per key block). Kernels reject sequences longer than the layout covers, here and
    wherever the whole mask keeps nothing past the layout: in an `and`, or in an `or` of such
    masks (the cover is then the least, or the most, of the operands').

    Example, a 3 x 3 block-causal layout of 64 x 64 blocks:
    `mask = #attn.block_sparse<block = [64, 64], layout = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]>`
  }];
  let parameters = (ins
    "int64_t":$block_q,
    "int64_t":$block_kv,
    "int64_t":$num_kv_blocks,
    ArrayRefParameter<"bool", "row-major layout, num_kv_blocks entries per row">:$layout);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getNumQBlocks() const { return getLayout().size() / getNumKvBlocks(); }
    bool isBlockKept(int64_t qb, int64_t kvb) const {
      return getLayout()[qb * getNumKvBlocks() + kvb];
    }
  }];
}

def Attn_LongformerMaskAttr : Attn_MaskAttr<"LongformerMask", "longformer"> {
  let summary = "Longformer-style block layout: a band of blocks plus global blocks";
  let description = [{
    Blocks are `block` x `block`. Query block `qb` attends key block `kb` when
    `|qb - kb| <= window`, or when either of them is listed in `global` (global blocks attend
    everything and are attended by everything).

    Example: `mask = #attn.longformer<block = 64, window = 1, global = [0]>`
  }];
  let parameters = (ins
    "int64_t":$block,
    "int64_t":$window,
    ArrayRefParameter<"int64_t", "global block indices">:$global);
  let assemblyFormat = [{
    `<` `block` `=` $block `,` `window` `=` $window `,` `global` `=` custom<IndexList>($global) `>`
  }];
  let genVerifyDecl = 1;
}

def Attn_BigBirdMaskAttr : Attn_MaskAttr<"BigBirdMask", "bigbird"> {
  let summary = "BigBird-style block layout: band, global and seeded random blocks";
  let description = [{
    Blocks are `block` x `block`. Query block `qb` attends key block `kb` when
    `|qb - kb| <= window`, when `qb < global` or `kb < global`, or when `kb` is one of the
    `random` blocks drawn for row `qb`: draw `r` (0 <= r < random) is
    `splitmix64(seed + qb * random + r) mod num_kv_blocks`, with
    `num_kv_blocks = ceil(seq_kv / block)`. The draw is stateless, so any tile of the layout
    can be evaluated on its own; repeated draws simply coincide.

    Example: `mask = #attn.bigbird<block = 64, window = 1, global = 1, random = 2, seed = 42>`
  }];
  let parameters = (ins "int64_t":$block, "int64_t":$window, "int64_t":$global,
                        "int64_t":$random, "uint64_t":$seed);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

class Attn_ComposedMaskAttr<string name, string attrMnemonic, string op>
    : Attn_MaskAttr<name, attrMnemonic> {
  let summary = "keeps a position when " # op # " of the masks keep it";
  let parameters = (ins ArrayRefParameter<"::mlir::Attribute", "masks">:$masks);
  // A custom list directive: a mistake inside a nested mask is reported once, where it is,
  // not again by each enclosing `and` / `or` ("failed to parse ... parameter 'masks'").
  let assemblyFormat = "`<` `[` custom<MaskList>($masks) `]` `>`";
  let genVerifyDecl = 1;
}

def Attn_AndMaskAttr : Attn_ComposedMaskAttr<"AndMask", "and", "all"> {
  let description = [{
    Intersection of two or more masks. `attn-normalize` flattens nested `and`s, drops
    `#attn.full` and merges sliding windows of the same alignment.

    Example: `mask = #attn.and<[#attn.causal<top_left>, #attn.longformer<block = 64, window = 2, global = [0]>]>`
  }];
}

def Attn_OrMaskAttr : Attn_ComposedMaskAttr<"OrMask", "or", "any"> {
  let description = [{
    Union of two or more masks. `attn-normalize` flattens nested `or`s; an `or` containing
    `#attn.full` becomes `#attn.full`.

    Example: `mask = #attn.or<[#attn.sliding_window<left = 127, right = 0>, #attn.block_sparse<block = [64, 64], layout = [[1, 1], [1, 0]]>]>`
  }];
}

def Attn_ModInputAttr : AttrDef<Attn_Dialect, "ModInput"> {
  let mnemonic = "input";
  let summary = "an input tensor that score_mod and mask_mod bodies read with attn.load";
  let description = [{
    One entry of a spec's `inputs`: its name (the symbol `attn.load` names), its element type
    (`i32` or `f32`) and its shape, one dim expression per dimension as text in the form the
    kernel descriptor carries: `[S*]symbol[+C|-C]` over the kernel's symbols `batch`,
    `heads`, `kv_heads`, `seq_q`, `seq_kv`, `head_dim` (`ModInputs.h`). The spec writes it
    `name: type [dims]` inside `inputs = [...]`.
  }];
  let parameters = (ins "StringAttr":$name, "Type":$elementType, "ArrayAttr":$dims);
  let assemblyFormat = "`<` $name `,` $elementType `,` $dims `>`";
}

#endif // ATTN_ATTRS_TD
