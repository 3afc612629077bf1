#include "detect/query_history.h"

#include <gtest/gtest.h>

namespace bulwark {
namespace {

std::vector<float> V(float x) { return {x, -x}; }

TEST(QueryHistoryTest, FifoEvictsTheOldest) {
  QueryHistory h(2, 3);
  for (int i = 1; i <= 5; ++i) h.Append(V(static_cast<float>(i)));
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.Snapshot(), (std::vector<std::vector<float>>{V(3), V(4), V(5)}));
  h.Append(std::vector<float>{1.0f});  // wrong dimension: ignored
  EXPECT_EQ(h.appended(), 5u);
}

TEST(QueryHistoryTest, SinceReturnsUnsavedRows) {
  QueryHistory h(2, 3);
  for (int i = 1; i <= 2; ++i) h.Append(V(static_cast<float>(i)));
  auto p = h.Since(0);
  EXPECT_EQ(p.first_sequence, 0u);
  EXPECT_EQ(p.rows.size(), 2u);
  for (int i = 3; i <= 6; ++i) h.Append(V(static_cast<float>(i)));
  p = h.Since(2);  // rows 2..5 appended, but only 3..5 are still held
  EXPECT_EQ(p.first_sequence, 3u);
  EXPECT_EQ(p.rows, (std::vector<std::vector<float>>{V(4), V(5), V(6)}));
  EXPECT_TRUE(h.Since(6).rows.empty());
}

TEST(QueryHistoryTest, RestoreKeepsSequenceNumbers) {
  QueryHistory h(2, 4);
  h.Restore(std::vector<std::vector<float>>{V(1), V(2)}, 10);
  EXPECT_EQ(h.appended(), 10u);
  h.Append(V(3));
  auto p = h.Since(10);
  EXPECT_EQ(p.first_sequence, 10u);
  EXPECT_EQ(p.rows, (std::vector<std::vector<float>>{V(3)}));
}

}  // namespace
}  // namespace bulwark
