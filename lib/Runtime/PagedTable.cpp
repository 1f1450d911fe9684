//===- PagedTable.cpp - A paged KV cache's CSR form to its table form -----===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// FlashInfer and OpenVINO describe a paged cache by its pages in CSR form
// (indptr, indices, last_page_len); attnc's kernels take vLLM's and
// FlashAttention's (block_table, kv_lens). The conversion checks what it
// reads, so that a bad CSR is an error here, not a wrong table: the page
// numbers themselves are checked against num_pages at launch.
//
//===----------------------------------------------------------------------===//

#include "CpuFeatures.h"
#include "Describe.h"

#include "attnc/Runtime/attnc_runtime.h"

#define ATTNC_RT_EXPORT __attribute__((visibility("default")))

using namespace attnc::rt;

namespace {

attnc_status fail(attnc_status status, const std::string &text) {
  setLastError(cat("attnc_block_table_from_csr: ", text));
  return status;
}

} // namespace

extern "C" ATTNC_RT_EXPORT int attnc_block_table_from_csr(int64_t batch, const int32_t *indptr,
                                          const int32_t *indices,
                                          const int32_t *last_page_len, int32_t page_size,
                                          int64_t max_pages, int32_t *block_table,
                                          int32_t *kv_lens) {
  if (batch < 0 || max_pages < 0 || page_size < 1)
    return fail(ATTNC_ERR_SHAPE, cat("batch = ", batch, ", max_pages = ", max_pages,
                                     " and page_size = ", page_size,
                                     " must be >= 0, >= 0 and >= 1"));
  if (!indptr || (batch && (!last_page_len || !kv_lens)) ||
      (batch && max_pages && !block_table))
    return fail(ATTNC_ERR_NULL, "indptr, last_page_len, block_table or kv_lens is NULL");
  if (indptr[0] != 0)
    return fail(ATTNC_ERR_INDEX, cat("indptr[0] = ", indptr[0], " but must be 0"));
  for (int64_t b = 0; b < batch; ++b) {
    int64_t pages = int64_t(indptr[b + 1]) - indptr[b];
    if (pages < 0 || pages > max_pages)
      return fail(ATTNC_ERR_INDEX,
                  cat("sequence ", b, " has indptr[", b + 1, "] - indptr[", b, "] = ", pages,
                      " pages, which must lie in [0, max_pages = ", max_pages, "]"));
    int32_t last = last_page_len[b];
    if (pages ? last < 1 || last > page_size : last != 0)
      return fail(ATTNC_ERR_INDEX,
                  cat("last_page_len[", b, "] = ", last, " but sequence ", b, " has ", pages,
                      pages ? " pages: it must lie in [1, page_size = " : " pages: it must be 0",
                      pages ? cat(page_size, "]") : ""));
    if (pages && !indices)
      return fail(ATTNC_ERR_NULL, "indices is NULL");
    int64_t keys = pages ? (pages - 1) * page_size + last : 0;
    if (keys > INT32_MAX)
      return fail(ATTNC_ERR_LIMIT, cat("sequence ", b, " has ", keys, " keys, more than int32 "
                                       "kv_lens holds"));
    for (int64_t i = 0; i < max_pages; ++i)
      block_table[b * max_pages + i] = i < pages ? indices[indptr[b] + i] : 0;
    kv_lens[b] = int32_t(keys);
  }
  return ATTNC_OK;
}
