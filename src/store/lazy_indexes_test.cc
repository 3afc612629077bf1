// The side indexes of a namespace (the lexical BM25 index and the metadata index) are built on
// first use, not at open (issue #12 point 3: open-to-first-search): an open reads no text and no
// metadata; the first hybrid search builds the lexical index, the first filtered search the
// metadata index, each from storage, and what they then hold is what an index kept up to date by
// every write holds (same rankings, same lexical statistics), including writes, quarantines and
// deletes made after the open but before the first use.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/entry_store.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

class LazyIndexesTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(/*create=*/true); }
  void Open(bool create) {
    store_.reset();
    StoreOptions options = testing::LexicalStoreOptions();
    options.retrieval_config = {{"default", "hybrid"}};
    auto store = create ? MemoryStore::Create(dir_.path(), options) : MemoryStore::Open(dir_.path(), options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  EntryStore& entries() { return *store_->impl().entries; }
  Entry MustAdd(const std::string& ns, const std::string& text, nlohmann::json metadata) {
    auto e = store_->Add(ns, {.text = text, .metadata = std::move(metadata)}, "alice");
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? *e : Entry{};
  }
  // Ids and scores of a search, best first.
  std::vector<std::pair<std::string, float>> Hits(const std::string& ns, const std::string& query,
                                                  nlohmann::json filter = nlohmann::json::object()) {
    auto r = store_->Search(ns, query, {.k = 10, .metadata_filter = std::move(filter)});
    EXPECT_TRUE(r.ok()) << r.status();
    std::vector<std::pair<std::string, float>> hits;
    if (r.ok())
      for (const SearchHit& h : r->hits) hits.emplace_back(h.entry.id, h.score);
    return hits;
  }
  // A namespace of memories in every state the index holds, with metadata to filter on.
  void Fill(const std::string& ns) {
    const char* texts[] = {"the dentist appointment moved to Tuesday morning",
                           "invoice 4471 is due on Friday, pay it from the travel account",
                           "Anna prefers the window seat on morning flights",
                           "the team meeting notes are in the shared drive",
                           "book the dentist for the kids in March",
                           "the Friday flight to Lisbon leaves at nine",
                           "renew the car insurance before the invoice arrives"};
    for (int i = 0; i < 7; ++i) {
      ids_.push_back(MustAdd(ns, texts[i], {{"topic", i % 2 == 0 ? "health" : "money"}, {"turn", i}}).id);
    }
    ASSERT_THAT(store_->Quarantine(ns, ids_[2], "admin", {{"why", "review"}}), IsOk());
    ASSERT_THAT(store_->Delete(ns, ids_[3], "alice"), IsOk());
  }
  testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
  std::vector<std::string> ids_;
};

TEST_F(LazyIndexesTest, OpenBuildsNeitherAndFirstUseMatchesTheEagerIndexes) {
  Fill("a");
  const auto lexical_before = entries().Lexical("a");
  const auto hybrid_before = Hits("a", "dentist Friday invoice");
  const auto filtered_before = Hits("a", "morning flight", {{"topic", "health"}});
  ASSERT_FALSE(hybrid_before.empty());
  ASSERT_FALSE(filtered_before.empty());

  Open(/*create=*/false);
  EXPECT_EQ(entries().SideIndexes("a").lexical, false);
  EXPECT_EQ(entries().SideIndexes("a").metadata, false);
  EXPECT_EQ(Hits("a", "dentist Friday invoice"), hybrid_before);  // builds the lexical index only
  EXPECT_EQ(entries().SideIndexes("a").lexical, true);
  EXPECT_EQ(entries().SideIndexes("a").metadata, false);
  EXPECT_EQ(Hits("a", "morning flight", {{"topic", "health"}}), filtered_before);
  EXPECT_EQ(entries().SideIndexes("a").metadata, true);
  const auto lexical_after = entries().Lexical("a");
  EXPECT_EQ(lexical_after.documents, lexical_before.documents);  // quarantined and deleted left out
  EXPECT_LE(lexical_after.documents, 5u);
  EXPECT_EQ(lexical_after.terms, lexical_before.terms);
}

TEST_F(LazyIndexesTest, ChangesBeforeTheFirstUseAreInTheBuiltIndexes) {
  Fill("a");
  const size_t documents_before = entries().Lexical("a").documents;
  Open(/*create=*/false);
  const Entry added = MustAdd("a", "the plumber Zoltan comes on Saturday", {{"topic", "home"}});
  ASSERT_THAT(store_->Quarantine("a", ids_[0], "admin", {{"why", "review"}}), IsOk());
  ASSERT_THAT(store_->Release("a", ids_[2], "admin"), IsOk());
  ASSERT_EQ(entries().SideIndexes("a").lexical, false);

  const auto plumber = Hits("a", "plumber Zoltan");
  ASSERT_FALSE(plumber.empty());
  EXPECT_EQ(plumber[0].first, added.id);
  EXPECT_EQ(entries().Lexical("a").documents, documents_before + 1);  // - quarantined + released + added
  const auto home = Hits("a", "plumber", {{"topic", "home"}});
  ASSERT_EQ(home.size(), 1u);
  EXPECT_EQ(home[0].first, added.id);
  for (const auto& [id, score] : Hits("a", "dentist appointment Tuesday")) EXPECT_NE(id, ids_[0]);
}

TEST_F(LazyIndexesTest, AVectorSearchBuildsNoSideIndex) {
  Fill("v");
  ASSERT_THAT(store_->impl().retrieval->Set("v", Retrieval::kVector), IsOk());
  Open(/*create=*/false);
  EXPECT_FALSE(Hits("v", "dentist appointment").empty());
  EXPECT_EQ(entries().SideIndexes("v").lexical, false);
  EXPECT_EQ(entries().SideIndexes("v").metadata, false);
  EXPECT_FALSE(Hits("v", "dentist", {{"topic", "health"}}).empty());
  EXPECT_EQ(entries().SideIndexes("v").lexical, false);
  EXPECT_EQ(entries().SideIndexes("v").metadata, true);
}

}  // namespace
}  // namespace bulwark
