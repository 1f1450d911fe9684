//===- NestingLimit.h - refuse specs nested past a bound --------*- C++ -*-===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// MLIR's parser recurses once or more per nested attribute, so a spec of
// thousands of nested #attn.and / #attn.or overflowed the stack (SIGSEGV)
// before any verifier ran. attnc's tools measure the bracket depth of the
// text first and refuse it, at the bracket that goes too deep, past a bound no
// real spec approaches.
//
//===----------------------------------------------------------------------===//

#ifndef ATTNC_TOOLS_NESTINGLIMIT_H
#define ATTNC_TOOLS_NESTINGLIMIT_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace attnc {

/// Brackets ( [ { < open and ) ] } > close; a spec may nest this deep.
/// (An #attn.and<[...]> level takes two; MLIR's parser crashed at ~10,000.)
inline constexpr int kMaxSpecNesting = 512;

/// The offset of the first bracket past kMaxSpecNesting, or npos. Skips
/// string literals and // comments; the '>' of a `->` closes nothing.
inline size_t findExcessNesting(llvm::StringRef text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        i += text[i] == '\\';
    } else if (c == '/' && text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxSpecNesting)
        return i;
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') &&
               !(c == '>' && i > 0 && text[i - 1] == '-')) {
      depth = depth > 0 ? depth - 1 : 0;
    }
  }
  return llvm::StringRef::npos;
}

} // namespace attnc

#endif // ATTNC_TOOLS_NESTINGLIMIT_H
