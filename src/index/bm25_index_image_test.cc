// Bm25Index::Restore from what slot_ids() and ForEachTerm give (the index snapshot's BM25 part):
// a restored index ranks every query exactly as the index it was taken from and as an index built
// by Add from the same documents (scores bit for bit, ties, filters, weights), keeps doing so
// through later adds and removes, and refuses every malformed image.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "index/bm25_index.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using Tokens = std::vector<std::string>;

struct PostingsImage {
  std::vector<int64_t> ids;
  std::vector<uint32_t> name_lengths;
  std::string names;
  std::vector<uint32_t> counts;
  std::vector<Bm25Index::Posting> postings;
};

PostingsImage TakeImage(const Bm25Index& index) {
  PostingsImage image;
  image.ids.assign(index.slot_ids().begin(), index.slot_ids().end());
  index.ForEachTerm([&](std::string_view term, std::span<const Bm25Index::Posting> postings) {
    image.name_lengths.push_back(static_cast<uint32_t>(term.size()));
    image.names += term;
    image.counts.push_back(static_cast<uint32_t>(postings.size()));
    image.postings.insert(image.postings.end(), postings.begin(), postings.end());
  });
  return image;
}

absl::StatusOr<Bm25Index> GiveImage(const PostingsImage& image, Bm25Options options = {}) {
  return Bm25Index::Restore(options, image.ids, image.name_lengths, image.names, image.counts,
                            image.postings);
}

void ExpectEqualHits(const std::vector<Bm25Hit>& got, const std::vector<Bm25Hit>& want,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].id, want[i].id) << what << " rank " << i;
    EXPECT_EQ(got[i].score, want[i].score) << what << " rank " << i;  // bit for bit
  }
}

Tokens RandomImageTokens(std::mt19937& rng, int vocabulary, int max_length) {
  Tokens tokens(std::uniform_int_distribution<int>(0, max_length)(rng));
  for (std::string& t : tokens) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    t = "w" + std::to_string(static_cast<int>(u * u * u * vocabulary));  // skewed: common words
  }
  return tokens;
}

TEST(Bm25IndexImage, ARestoredIndexRanksAsTheOriginalAndAsAFreshBuild) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    const int vocabulary = std::uniform_int_distribution<int>(3, 120)(rng);
    const Bm25Options options{.k1 = seed % 3 == 0 ? 0.5 : 1.2, .b = seed % 4 == 0 ? 0.0 : 0.75};
    std::map<int64_t, Tokens> docs;
    Bm25Index original(options);
    for (int64_t id = 1; id <= std::uniform_int_distribution<int64_t>(1, 300)(rng); ++id) {
      docs[id * 3] = RandomImageTokens(rng, vocabulary, 20);
      ASSERT_THAT(original.Add(id * 3, docs[id * 3]), IsOk());
    }
    for (auto it = docs.begin(); it != docs.end();) {  // removals leave free slots and free terms
      if (rng() % 3 != 0) {
        ++it;
        continue;
      }
      ASSERT_THAT(original.Remove(it->first), IsOk());
      it = docs.erase(it);
    }
    for (int64_t id = 2; id < 100; id += 3) {  // re-adds into some of the freed slots
      if (rng() % 2 == 0) continue;
      docs[id] = RandomImageTokens(rng, vocabulary, 20);
      ASSERT_THAT(original.Add(id, docs[id]), IsOk());
    }
    auto restored = GiveImage(TakeImage(original), options);
    ASSERT_THAT(restored.status(), IsOk());
    Bm25Index fresh(options);
    for (const auto& [id, tokens] : docs) ASSERT_THAT(fresh.Add(id, tokens), IsOk());
    EXPECT_EQ(restored->size(), docs.size());
    EXPECT_EQ(restored->term_count(), original.term_count());
    // The same later changes to the original and the restored index.
    const int64_t added = 1'000'001;
    const Tokens added_tokens = RandomImageTokens(rng, vocabulary, 20);
    for (Bm25Index* index : {&original, &*restored, &fresh}) {
      ASSERT_THAT(index->Add(added, added_tokens), IsOk());
      if (!docs.empty()) {
        ASSERT_THAT(index->Remove(docs.begin()->first), IsOk());
      }
    }
    for (int q = 0; q < 20; ++q) {
      Tokens query = RandomImageTokens(rng, vocabulary, 9);
      std::vector<double> weights;
      if (q % 2 == 1) {
        for (size_t i = 0; i < query.size(); ++i) weights.push_back((rng() % 5) * 0.5);
      }
      const int k = std::uniform_int_distribution<int>(1, 40)(rng);
      const Bm25Index::Accept odd = [](const void*, int64_t id) { return id % 2 == 1; };
      const Bm25Index::Accept accept = q % 3 == 0 ? odd : nullptr;
      const std::string what = "seed " + std::to_string(seed) + " query " + std::to_string(q);
      const auto want = original.Search(query, k, accept, nullptr, weights);
      ExpectEqualHits(restored->Search(query, k, accept, nullptr, weights), want, what);
      ExpectEqualHits(fresh.Search(query, k, accept, nullptr, weights), want, what + " fresh");
      ExpectEqualHits(restored->SearchExhaustive(query, k, accept, nullptr, weights), want,
                      what + " exhaustive");
    }
  }
}

TEST(Bm25IndexImage, AnEmptyIndexRoundTrips) {
  auto restored = GiveImage(TakeImage(Bm25Index()));
  ASSERT_THAT(restored.status(), IsOk());
  EXPECT_EQ(restored->size(), 0u);
  EXPECT_TRUE(restored->Search(Tokens{"x"}, 3).empty());
}

TEST(Bm25IndexImage, MalformedImagesAreRefused) {
  Bm25Index index;
  ASSERT_THAT(index.Add(7, Tokens{"cat", "eats", "fish", "fish"}), IsOk());
  ASSERT_THAT(index.Add(8, Tokens{"dog", "eats"}), IsOk());
  ASSERT_THAT(index.Add(9, Tokens{"gone"}), IsOk());
  ASSERT_THAT(index.Remove(9), IsOk());  // a free slot
  const PostingsImage good = TakeImage(index);
  ASSERT_THAT(GiveImage(good).status(), IsOk());
  ASSERT_EQ(good.ids.size(), 3u);
  const auto refused = [&](const std::string& what, auto&& change) {
    PostingsImage bad = good;
    change(bad);
    EXPECT_THAT(GiveImage(bad).status(), StatusIs(absl::StatusCode::kInvalidArgument)) << what;
  };
  refused("repeated id", [](PostingsImage& i) { i.ids[1] = 7; });
  refused("posting of a free slot", [](PostingsImage& i) { i.postings[0].doc = 2; });
  refused("posting past the slots", [](PostingsImage& i) { i.postings[0].doc = 9; });
  refused("tf 0", [](PostingsImage& i) { i.postings[0].tf = 0; });
  refused("term without postings", [](PostingsImage& i) { i.counts[0] = 0; });
  refused("counts past the postings", [](PostingsImage& i) { i.counts.back() += 1; });
  refused("postings left over", [](PostingsImage& i) { i.postings.push_back(i.postings.back()); });
  refused("name past the names", [](PostingsImage& i) { i.name_lengths.back() += 1; });
  refused("names left over", [](PostingsImage& i) { i.names += "x"; });
  refused("arrays of different sizes", [](PostingsImage& i) { i.counts.push_back(1); });
  ASSERT_EQ(good.names, "cateatsfishdog");  // term ids in the order Add met the words
  refused("repeated term", [](PostingsImage& i) { i.names.replace(11, 3, "cat"); });
  refused("postings not ascending", [](PostingsImage& i) {
    // "eats" is in both documents: swap its two postings.
    size_t at = 0;
    for (size_t t = 0; t < i.counts.size(); ++t) {
      if (i.counts[t] == 2) std::swap(i.postings[at], i.postings[at + 1]);
      at += i.counts[t];
    }
  });
}

}  // namespace
}  // namespace bulwark
