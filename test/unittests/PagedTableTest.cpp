//===- PagedTableTest.cpp - attnc_block_table_from_csr ---------------------===//
//
// Part of attnc, under the Apache License v2.0 with LLVM Exceptions.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "attnc/Runtime/attnc_runtime.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

// Three sequences of pages of 16 keys: 3 pages with 5 keys in the last (37
// keys), none, and 1 full page (16 keys): rows padded with 0.
TEST(PagedTable, CsrToTableAndLengths) {
  std::vector<int32_t> indptr{0, 3, 3, 4}, indices{9, 2, 7, 4}, last{5, 0, 16};
  std::vector<int32_t> table(3 * 4, -1), lens(3, -1);
  ASSERT_EQ(attnc_block_table_from_csr(3, indptr.data(), indices.data(), last.data(), 16, 4,
                                       table.data(), lens.data()),
            ATTNC_OK)
      << attnc_last_error();
  EXPECT_EQ(table, (std::vector<int32_t>{9, 2, 7, 0, 0, 0, 0, 0, 4, 0, 0, 0}));
  EXPECT_EQ(lens, (std::vector<int32_t>{37, 0, 16}));
}

struct BadCsr {
  std::vector<int32_t> indptr, last;
  int64_t maxPages;
  int status;
  const char *message;
};

class PagedTableErrors : public testing::TestWithParam<BadCsr> {};

TEST_P(PagedTableErrors, NameTheEntry) {
  const BadCsr &c = GetParam();
  std::vector<int32_t> indices(8, 1), table(2 * 8), lens(2);
  EXPECT_EQ(attnc_block_table_from_csr(2, c.indptr.data(), indices.data(), c.last.data(), 16,
                                       c.maxPages, table.data(), lens.data()),
            c.status);
  EXPECT_EQ(std::string(attnc_last_error()), std::string("attnc_block_table_from_csr: ") +
                                                 c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Csr, PagedTableErrors,
    testing::Values(
        BadCsr{{1, 2, 3}, {1, 1}, 4, ATTNC_ERR_INDEX, "indptr[0] = 1 but must be 0"},
        BadCsr{{0, 3, 2}, {1, 1}, 4, ATTNC_ERR_INDEX,
               "sequence 1 has indptr[2] - indptr[1] = -1 pages, which must lie in [0, "
               "max_pages = 4]"},
        BadCsr{{0, 5, 6}, {1, 1}, 4, ATTNC_ERR_INDEX,
               "sequence 0 has indptr[1] - indptr[0] = 5 pages, which must lie in [0, "
               "max_pages = 4]"},
        BadCsr{{0, 1, 2}, {17, 1}, 4, ATTNC_ERR_INDEX,
               "last_page_len[0] = 17 but sequence 0 has 1 pages: it must lie in [1, "
               "page_size = 16]"},
        BadCsr{{0, 1, 1}, {4, 3}, 4, ATTNC_ERR_INDEX,
               "last_page_len[1] = 3 but sequence 1 has 0 pages: it must be 0"}));

} // namespace
