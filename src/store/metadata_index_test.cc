// MetadataIndex: Candidates is a superset of the rows that match (nlohmann::json equality, numbers
// across types included), exact whenever no value is an unsigned integer above INT64_MAX, and
// follows Add (replace) and Remove. Checked against a plain filter over every row.
#include "store/metadata_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace bulwark {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using json = nlohmann::json;

// The store's rule: every filter key present with an equal value.
bool Matches(const json& metadata, const json& filter) {
  for (const auto& [key, value] : filter.items()) {
    auto it = metadata.find(key);
    if (it == metadata.end() || *it != value) return false;
  }
  return true;
}

std::vector<int64_t> Sorted(std::vector<int64_t> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(MetadataIndexTest, FindsRowsByEveryFilterField) {
  MetadataIndex index;
  index.Add(1, {{"category", "travel"}, {"priority", 1}});
  index.Add(2, {{"category", "work"}, {"priority", 1}});
  index.Add(3, {{"category", "travel"}, {"priority", 2}, {"tags", {"a", "b"}}});
  index.Add(4, json::object());
  EXPECT_THAT(Sorted(*index.Candidates({{"category", "travel"}})), ElementsAre(1, 3));
  EXPECT_THAT(Sorted(*index.Candidates({{"category", "travel"}, {"priority", 1}})), ElementsAre(1));
  EXPECT_THAT(Sorted(*index.Candidates({{"tags", {"a", "b"}}})), ElementsAre(3));
  EXPECT_THAT(*index.Candidates({{"tags", {"b", "a"}}}), IsEmpty());  // arrays are ordered
  EXPECT_THAT(*index.Candidates({{"category", "nope"}}), IsEmpty());
  EXPECT_THAT(*index.Candidates({{"missing", "travel"}}), IsEmpty());
  EXPECT_THAT(*index.Candidates({{"category", "travel"}, {"missing", 1}}), IsEmpty());
  EXPECT_EQ(index.Candidates(json::object()), std::nullopt);  // no narrowing: every row
  EXPECT_EQ(index.rows(), 4u);
}

TEST(MetadataIndexTest, NumbersMatchAcrossTypesLikeJsonEquality) {
  MetadataIndex index;
  index.Add(1, {{"n", 1}});             // number_unsigned
  index.Add(2, {{"n", -1}});            // number_integer
  index.Add(3, {{"n", 1.0}});           // number_float
  index.Add(4, {{"n", "1"}});           // a string is not a number
  index.Add(5, {{"n", {{"x", 1.0}}}});  // nested
  index.Add(6, {{"n", -0.0}});
  index.Add(7, {{"n", true}});
  EXPECT_THAT(Sorted(*index.Candidates({{"n", 1}})), ElementsAre(1, 3));
  EXPECT_THAT(Sorted(*index.Candidates({{"n", 1.0}})), ElementsAre(1, 3));
  EXPECT_THAT(Sorted(*index.Candidates({{"n", -1.0}})), ElementsAre(2));
  EXPECT_THAT(Sorted(*index.Candidates({{"n", {{"x", 1}}}})), ElementsAre(5));
  EXPECT_THAT(Sorted(*index.Candidates({{"n", 0}})), ElementsAre(6));
  EXPECT_THAT(Sorted(*index.Candidates({{"n", true}})), ElementsAre(7));
}

TEST(MetadataIndexTest, HugeUnsignedValuesNeverHideAMatch) {
  // nlohmann calls 2^64-1 (unsigned) equal to -1 (signed) but to 1.8e19 (float) too.
  const uint64_t huge = UINT64_MAX;
  MetadataIndex index;
  index.Add(1, {{"n", huge}});
  index.Add(2, {{"n", -1}});
  index.Add(3, {{"n", 5}, {"m", {1, huge}}});
  ASSERT_TRUE(json(huge) == json(-1));
  for (const json& value : {json(-1), json(static_cast<double>(huge)), json(7)}) {
    const std::vector<int64_t> got = *index.Candidates({{"n", value}});
    EXPECT_THAT(got, ::testing::Contains(1)) << value;  // the huge row may match anything on "n"
  }
  EXPECT_THAT(Sorted(*index.Candidates({{"n", -1}})), ElementsAre(1, 2));
  // A filter value holding one cannot narrow by itself; other fields still do.
  EXPECT_EQ(index.Candidates({{"n", huge}}), std::nullopt);
  EXPECT_THAT(Sorted(*index.Candidates({{"n", huge}, {"m", {1, 2}}})), ElementsAre(3));
}

TEST(MetadataIndexTest, AddReplacesAndRemoveForgets) {
  MetadataIndex index;
  index.Add(1, {{"category", "travel"}});
  index.Add(2, {{"category", "travel"}});
  index.Add(1, {{"category", "work"}});  // an update
  EXPECT_THAT(Sorted(*index.Candidates({{"category", "travel"}})), ElementsAre(2));
  EXPECT_THAT(Sorted(*index.Candidates({{"category", "work"}})), ElementsAre(1));
  index.Remove(2);
  index.Remove(2);   // again: ignored
  index.Remove(99);  // unknown: ignored
  EXPECT_THAT(*index.Candidates({{"category", "travel"}}), IsEmpty());
  EXPECT_EQ(index.rows(), 1u);
  index.Add(3, json::array());  // not an object: indexed with no fields
  EXPECT_EQ(index.rows(), 2u);
  EXPECT_THAT(*index.Candidates({{"category", "anything"}}), IsEmpty());
}

// Random metadata over a small pool of values chosen to collide under loose equality; random
// filters of one to three fields. Candidates must contain every matching row, and any extra row
// must be explained by an unhashable value (the row's or the filter's) under a filtered key.
TEST(MetadataIndexTest, CandidatesMatchBruteForce) {
  const std::vector<json> pool = {json(1),          json(1.0),        json(-1),           json(2),
                                  json(UINT64_MAX), json("1"),        json(true),         json(nullptr),
                                  json({1, 2}),     json({{"a", 1}}), json({{"a", 1.0}}), json(0.5),
                                  json("travel"),   json::array(),    json(1e300)};
  const std::vector<std::string> keys = {"a", "b", "c", "d"};
  std::mt19937 rng(12);
  MetadataIndex index;
  std::map<int64_t, json> rows;
  auto random_object = [&](size_t max_fields) {
    json object = json::object();
    const size_t fields = rng() % (max_fields + 1);
    for (size_t i = 0; i < fields; ++i) object[keys[rng() % keys.size()]] = pool[rng() % pool.size()];
    return object;
  };
  for (int round = 0; round < 2000; ++round) {
    const int64_t id = static_cast<int64_t>(rng() % 400);
    if (rng() % 5 == 0) {
      index.Remove(id);
      rows.erase(id);
    } else {
      rows[id] = random_object(4);
      index.Add(id, rows[id]);
    }
    if (round % 20 != 0) continue;
    for (int trial = 0; trial < 10; ++trial) {
      json filter = random_object(3);
      if (filter.empty()) filter["a"] = pool[rng() % pool.size()];
      const std::optional<std::vector<int64_t>> got = index.Candidates(filter);
      const std::set<int64_t> candidates =
          got ? std::set<int64_t>(got->begin(), got->end()) : std::set<int64_t>();
      if (got) {
        EXPECT_EQ(candidates.size(), got->size()) << "a row is listed twice for " << filter;
      }
      for (const auto& [row_id, metadata] : rows) {
        const bool match = Matches(metadata, filter);
        if (match && got) {
          EXPECT_TRUE(candidates.contains(row_id)) << filter << " misses " << metadata;
        }
        if (!match && got && candidates.contains(row_id)) {
          bool unhashable = false;
          for (const auto& [key, value] : filter.items()) {
            auto it = metadata.find(key);
            const bool row_huge =
                it != metadata.end() && it->dump().find("18446744073709551615") != std::string::npos;
            const bool filter_huge = value.dump().find("18446744073709551615") != std::string::npos;
            if (row_huge || filter_huge) unhashable = true;
          }
          EXPECT_TRUE(unhashable) << filter << " lists non-matching " << metadata;
        }
      }
      if (!got) {
        for (const auto& [key, value] : filter.items()) {
          EXPECT_NE(value.dump().find("18446744073709551615"), std::string::npos) << filter;
        }
      }
    }
  }
}

}  // namespace
}  // namespace bulwark
