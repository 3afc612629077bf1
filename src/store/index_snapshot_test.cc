// The index snapshot (store/index_snapshot.h, issue #12 point 3): a store that closes writes it,
// the next open starts from it, and every search -- vector and hybrid ranking, metadata filters,
// quarantined entries, the honeypot observation -- answers exactly as after an open that scanned
// the rows. A snapshot that is tampered with, truncated, made with another keyring, ahead of the
// store or missing rows is ignored (the open scans); a stale one is brought up to date from the
// history, so rows added, deleted, quarantined or released after it are (not) found as they must
// be. The BM25 indexes stay in the file until a hybrid search needs one (a vector-ranked namespace
// never reads its own), then come with the rows changed since replayed; one written with other
// lexical terms, or whose bytes changed, is built from the rows instead.
#include "store/index_snapshot.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
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
using Hits = std::vector<std::pair<std::string, float>>;

const char* const kTexts[] = {"the dentist appointment moved to Tuesday morning",
                              "invoice 4471 is due on Friday, pay it from the travel account",
                              "Anna prefers the window seat on morning flights",
                              "the team meeting notes are in the shared drive",
                              "book the dentist for the kids in March",
                              "the Friday flight to Lisbon leaves at nine",
                              "renew the car insurance before the invoice arrives"};

class IndexSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Open(/*create=*/true, /*snapshots=*/true);
    for (const char* ns : {"a", "v"}) {
      std::vector<NewEntry> batch;
      for (int i = 0; i < 28; ++i) {
        batch.push_back({.text = std::string(kTexts[i % 7]) + " note " + std::to_string(i),
                         .metadata = {{"topic", i % 2 == 0 ? "health" : "money"}}});
      }
      auto added = store_->AddBatch(ns, batch, "alice");  // one transaction: a fast fixture
      ASSERT_THAT(added.status(), IsOk());
      for (const Entry& e : *added) ids_[ns].push_back(e.id);
      ASSERT_THAT(store_->Quarantine(ns, ids_[ns][2], "admin", {{"why", "review"}}), IsOk());
      ASSERT_THAT(store_->Delete(ns, ids_[ns][3], "alice"), IsOk());
    }
    ASSERT_THAT(store_->impl().retrieval->Set("v", Retrieval::kVector), IsOk());
    auto pot = store_->embedder().Embed("dentist invoice secret");
    ASSERT_THAT(pot.status(), IsOk());
    const std::vector<WritePipeline::SystemEntry> pot_entries = {
        {"dentist invoice secret", nlohmann::json::object(), *pot}};
    auto pots =
        store_->impl().pipeline->AddSystemEntries("a", pot_entries, Kind::kHoneypot, "bulwark:honeypots");
    ASSERT_THAT(pots.status(), IsOk());
  }
  // snapshots: read and write the snapshot (written at close: every test store is above 1 row).
  void Open(bool create, bool snapshots) {
    store_.reset();
    StoreOptions options = testing::LexicalStoreOptions();
    options.retrieval_config = retrieval_config_;
    options.index_snapshot_min_rows = snapshots ? 1 : -1;
    auto store = create ? MemoryStore::Create(dir_.path(), options) : MemoryStore::Open(dir_.path(), options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }
  EntryStore& entries() { return *store_->impl().entries; }
  std::filesystem::path snapshot() const { return dir_.path() / StoreLayout::kIndexSnapshotFile; }
  std::string MustAdd(const std::string& ns, const std::string& text, nlohmann::json metadata) {
    auto e = store_->Add(ns, {.text = text, .metadata = std::move(metadata)}, "alice");
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? e->id : "";
  }
  Hits Search(const std::string& ns, const std::string& query, SearchOptions options) {
    options.k = 8;
    auto r = store_->Search(ns, query, options);
    EXPECT_TRUE(r.ok()) << r.status();
    Hits hits;
    if (r.ok())
      for (const SearchHit& h : r->hits) hits.emplace_back(h.entry.id, h.score);
    return hits;
  }
  // Every kind of search this test compares, in one list.
  std::vector<Hits> AllSearches() {
    std::vector<Hits> all;
    for (const char* ns : {"a", "v"}) {
      for (const char* q : {"dentist Friday invoice", "morning flight Lisbon", "plumber Zoltan Saturday"}) {
        all.push_back(Search(ns, q, {}));
        all.push_back(Search(ns, q, {.metadata_filter = {{"topic", "health"}}}));
        all.push_back(Search(ns, q, {.include_quarantined = true}));
      }
    }
    auto q = store_->embedder().Embed("dentist invoice secret");
    EXPECT_TRUE(q.ok());
    auto observed = entries().Observe("a", *q, 4, "dentist invoice secret");
    EXPECT_THAT(observed.status(), IsOk());
    Hits rows;
    if (observed.ok())
      for (const auto& row : *observed) rows.emplace_back(row.is_pot ? "pot" : "memory", row.score);
    all.push_back(rows);
    return all;
  }
  // The searches after an open that scans the rows (the snapshot left as it is).
  std::vector<Hits> FreshBuild() {
    Open(false, /*snapshots=*/false);
    EXPECT_FALSE(entries().open_report().from_snapshot);
    return AllSearches();
  }
  // Flips bits of one byte (XOR with `mask`, not zero: the byte always changes).
  void Corrupt(uint64_t offset, char mask) {
    std::fstream f(snapshot(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    const char byte = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(byte ^ mask));
  }
  testing::TempDir dir_;
  nlohmann::json retrieval_config_ = {{"default", "hybrid"}};
  std::unique_ptr<MemoryStore> store_;
  std::map<std::string, std::vector<std::string>> ids_;
};

TEST_F(IndexSnapshotTest, TheOpenStartsFromTheSnapshotAndSearchesAnswerAsAfterAScan) {
  Open(false, true);  // the close wrote the snapshot
  ASSERT_TRUE(std::filesystem::exists(snapshot()));
  Open(false, true);
  EXPECT_TRUE(entries().open_report().from_snapshot);
  EXPECT_EQ(entries().open_report().caught_up_entries, 0);
  // Both namespaces' BM25 indexes are in it, left there by the open; the first hybrid search of
  // "a" restores its own (nothing to tokenize), "v" ranks by vector only and never reads its.
  EXPECT_EQ(entries().open_report().lexical_from_snapshot, 2);
  EXPECT_FALSE(entries().SideIndexes("a").lexical);
  const std::vector<Hits> with_snapshot = AllSearches();
  EXPECT_TRUE(entries().SideIndexes("a").lexical);
  EXPECT_FALSE(entries().SideIndexes("v").lexical);
  EXPECT_EQ(entries().open_report().lexical_restored, 1);
  EXPECT_FALSE(with_snapshot.front().empty());
  EXPECT_EQ(with_snapshot, FreshBuild());
}

TEST_F(IndexSnapshotTest, ChangesAfterTheSnapshotAreAppliedFromTheHistory) {
  Open(false, true);
  ASSERT_TRUE(std::filesystem::exists(snapshot()));
  Open(false, false);  // changes that do not rewrite the snapshot
  const std::string added = MustAdd("a", "the plumber Zoltan comes on Saturday", {{"topic", "health"}});
  ASSERT_THAT(store_->Delete("a", ids_["a"][0], "alice"), IsOk());
  ASSERT_THAT(store_->Quarantine("a", ids_["a"][5], "admin", {{"why", "review"}}), IsOk());
  ASSERT_THAT(store_->Release("a", ids_["a"][2], "admin"), IsOk());  // back into the BM25 index
  Open(false, true);
  EXPECT_TRUE(entries().open_report().from_snapshot);
  EXPECT_EQ(entries().open_report().caught_up_entries, 4);
  EXPECT_EQ(entries().open_report().lexical_from_snapshot, 2);
  const Hits plumber = Search("a", "plumber Zoltan Saturday", {});
  EXPECT_EQ(entries().open_report().lexical_restored, 1);  // and brought up to date
  ASSERT_FALSE(plumber.empty());
  EXPECT_EQ(plumber[0].first, added);
  for (const char* q : {"dentist appointment Tuesday", "Friday flight Lisbon nine"}) {
    for (const auto& [id, score] : Search("a", q, {})) {
      EXPECT_NE(id, ids_["a"][0]);
      EXPECT_NE(id, ids_["a"][5]);
    }
  }
  const std::vector<Hits> with_snapshot = AllSearches();
  EXPECT_EQ(with_snapshot, FreshBuild());
}

TEST_F(IndexSnapshotTest, ATamperedOrTruncatedSnapshotIsIgnored) {
  Open(false, true);
  const uint64_t size = std::filesystem::file_size(snapshot());
  std::string bytes;
  {
    std::ifstream in(snapshot(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t term = bytes.find("dentist");  // a term's name in a BM25 section
  ASSERT_NE(term, std::string::npos);
  const std::vector<Hits> fresh = FreshBuild();
  for (const uint64_t offset :
       {uint64_t{40}, size / 2, uint64_t{term}, size - 1}) {  // header, vectors, BM25, MAC
    const std::filesystem::path copy = dir_.path() / "good.snap";
    std::filesystem::copy_file(snapshot(), copy, std::filesystem::copy_options::overwrite_existing);
    Corrupt(offset, '\x5a');
    Open(false, true);
    // A BM25 body is under its own digest: the rest of the file is used, that index is built from
    // the rows (its changed bytes never reach Bm25Index::Restore).
    const bool body = offset == term;
    EXPECT_EQ(entries().open_report().from_snapshot, body) << "byte " << offset;
    EXPECT_EQ(AllSearches(), fresh) << "byte " << offset;
    EXPECT_EQ(entries().open_report().lexical_restored, 0) << "byte " << offset;
    EXPECT_EQ(entries().SideIndexes("a").lexical, true) << "byte " << offset;
    store_.reset();  // the close writes a good snapshot again; start each case from the copy
    std::filesystem::copy_file(copy, snapshot(), std::filesystem::copy_options::overwrite_existing);
  }
  std::filesystem::resize_file(snapshot(), size - 100);
  Open(false, true);
  EXPECT_FALSE(entries().open_report().from_snapshot);
  EXPECT_EQ(AllSearches(), fresh);
}

// A BM25 index written by a process that tokenized otherwise is not restored: the vectors are, and
// the BM25 index is built from the rows on first use (then the next close writes it).
TEST_F(IndexSnapshotTest, Bm25IndexesOfOtherLexicalTermsAreBuiltFromTheRows) {
  Open(false, true);
  retrieval_config_ = {{"default", "hybrid"}, {"stem", false}};
  const std::vector<Hits> fresh = FreshBuild();
  Open(false, true);
  EXPECT_TRUE(entries().open_report().from_snapshot);
  EXPECT_EQ(entries().open_report().lexical_from_snapshot, 0);
  EXPECT_FALSE(entries().SideIndexes("a").lexical);
  EXPECT_EQ(AllSearches(), fresh);  // builds "a"'s (hybrid); "v" ranks by vector only
  Open(false, true);                // the close wrote "a"'s, with the unstemmed terms
  EXPECT_TRUE(entries().open_report().from_snapshot);
  EXPECT_EQ(entries().open_report().lexical_from_snapshot, 1);
  EXPECT_EQ(AllSearches(), fresh);
}

// A vector-ranked namespace leaves its BM25 index in the file; when its ranking turns hybrid later,
// the first hybrid search restores it and replays the rows changed since the snapshot (added,
// deleted, quarantined, released), answering as an index built from the rows.
TEST_F(IndexSnapshotTest, AVectorRankedNamespaceReadsItsBm25IndexOnlyWhenAHybridSearchNeedsIt) {
  Open(false, true);
  Open(false, true);
  ASSERT_TRUE(entries().open_report().from_snapshot);
  EXPECT_FALSE(Search("v", "dentist Friday invoice", {}).empty());
  EXPECT_FALSE(entries().SideIndexes("v").lexical);
  const std::string added = MustAdd("v", "the plumber Zoltan comes on Saturday", {{"topic", "health"}});
  ASSERT_THAT(store_->Delete("v", ids_["v"][0], "alice"), IsOk());
  ASSERT_THAT(store_->Quarantine("v", ids_["v"][5], "admin", {{"why", "review"}}), IsOk());
  ASSERT_THAT(store_->Release("v", ids_["v"][2], "admin"), IsOk());
  ASSERT_THAT(store_->impl().retrieval->Set("v", Retrieval::kHybrid), IsOk());
  EXPECT_EQ(entries().open_report().lexical_restored, 0);
  const Hits plumber = Search("v", "plumber Zoltan Saturday", {});
  EXPECT_EQ(entries().open_report().lexical_restored, 1);
  ASSERT_FALSE(plumber.empty());
  EXPECT_EQ(plumber[0].first, added);
  const std::vector<Hits> restored = AllSearches();
  EXPECT_EQ(restored, FreshBuild());
}

// The BM25 bodies are read after the open: bytes changed in place meanwhile fail their digest, and
// that index is built from the rows instead.
TEST_F(IndexSnapshotTest, ABm25BodyChangedAfterTheOpenIsNotUsed) {
  Open(false, true);
  std::string bytes;
  {
    std::ifstream in(snapshot(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t term = bytes.find("dentist");
  ASSERT_NE(term, std::string::npos);
  const std::vector<Hits> fresh = FreshBuild();
  Open(false, true);
  ASSERT_TRUE(entries().open_report().from_snapshot);
  Corrupt(term, '\x01');
  EXPECT_EQ(AllSearches(), fresh);
  EXPECT_EQ(entries().open_report().lexical_restored, 0);
  EXPECT_TRUE(entries().SideIndexes("a").lexical);
}

TEST_F(IndexSnapshotTest, ASnapshotOfAnotherStoreIsIgnored) {
  testing::TempDir other_dir;
  {
    StoreOptions options = testing::LexicalStoreOptions();
    options.index_snapshot_min_rows = 1;
    auto other = MemoryStore::Create(other_dir.path(), options);
    ASSERT_THAT(other.status(), IsOk());
    ASSERT_THAT((*other)->Add("a", {.text = "a memory of another store"}, "bob").status(), IsOk());
  }
  const std::vector<Hits> fresh = FreshBuild();
  store_.reset();
  std::filesystem::copy_file(other_dir.path() / StoreLayout::kIndexSnapshotFile, snapshot(),
                             std::filesystem::copy_options::overwrite_existing);
  Open(false, true);
  EXPECT_FALSE(entries().open_report().from_snapshot);  // another keyring: the MAC fails
  EXPECT_EQ(AllSearches(), fresh);
}

// Even a file MACed with the store's own key cannot hide rows: the counts and the seq are checked.
TEST_F(IndexSnapshotTest, AnAuthenticSnapshotThatOmitsRowsOrIsAheadIsIgnored) {
  Open(false, false);
  const std::vector<Hits> fresh = AllSearches();
  const int64_t seq = *entries().CatchUpNow();
  auto newest = entries().backend().NewestLink();  // the right link: only the counts are wrong
  ASSERT_THAT(newest.status(), IsOk());
  ASSERT_EQ(newest->first, seq);
  const RowVersionTable versions;
  auto empty = FlatIndex::Create(store_->embedder().dimension());
  ASSERT_THAT(empty.status(), IsOk());
  for (const int64_t at : {seq, seq + 5}) {
    IndexSnapshotSource source{.seq = at, .link = newest->second.link, .row_versions = &versions};
    source.namespaces.push_back({"a", 1, empty->get()});  // namespace "a" holds 29 rows
    ASSERT_THAT(
        WriteIndexSnapshot(snapshot(), store_->embedder().dimension(), source, entries().keyring()).status(),
        IsOk());
    Open(false, true);
    EXPECT_FALSE(entries().open_report().from_snapshot) << "seq " << at;
    EXPECT_EQ(AllSearches(), fresh) << "seq " << at;
    Open(false, false);
  }
}

// Every byte of the header and of the first namespace's record (the counts read before the MAC is
// checked) changed, and the file cut anywhere: each read is refused, none crashes or allocates
// beyond the file (ASan in CI).
TEST_F(IndexSnapshotTest, EveryFlippedHeaderByteAndEveryCutIsRefused) {
  Open(false, false);  // the close wrote the snapshot
  const int dimension = store_->embedder().dimension();
  const Keyring& keyring = entries().keyring();
  const auto rows = [](std::string_view, size_t n) { return n; };
  ASSERT_THAT(ReadIndexSnapshot(snapshot(), dimension, keyring, rows).status(), IsOk());
  std::string bytes;
  {
    std::ifstream in(snapshot(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::filesystem::path bad = dir_.path() / "bad.snap";
  const auto read = [&](const std::string& contents) {
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << contents;
    return ReadIndexSnapshot(bad, dimension, keyring, rows).status();
  };
  for (size_t offset = 0; offset < 140 && offset < bytes.size(); ++offset) {
    std::string flipped = bytes;
    flipped[offset] = static_cast<char>(flipped[offset] ^ 0x01);
    const absl::Status s = read(flipped);
    EXPECT_FALSE(s.ok()) << "byte " << offset;
    EXPECT_NE(s.code(), absl::StatusCode::kInternal) << s;
  }
  for (const size_t cut : {size_t{0}, size_t{7}, size_t{99}, size_t{100}, size_t{133}, bytes.size() / 3,
                           bytes.size() - 33, bytes.size() - 1}) {
    EXPECT_FALSE(read(bytes.substr(0, cut)).ok()) << "cut at " << cut;
  }
  EXPECT_FALSE(read(bytes + "x").ok());
}

TEST(IndexSnapshotFileTest, BadArgumentsAndMissingFilesAreRefused) {
  testing::TempDir dir;
  Keyring empty_keyring;
  const RowVersionTable versions;
  IndexSnapshotSource source{.seq = 1, .link = "", .row_versions = &versions};
  EXPECT_EQ(WriteIndexSnapshot(dir.path() / "x.snap", 8, source, empty_keyring).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const auto none = [](std::string_view, size_t rows) { return rows; };
  EXPECT_EQ(ReadIndexSnapshot(dir.path() / "x.snap", 8, empty_keyring, none).status().code(),
            absl::StatusCode::kNotFound);
  std::ofstream(dir.path() / "short.snap") << "BWIXSNAP";
  EXPECT_EQ(ReadIndexSnapshot(dir.path() / "short.snap", 8, empty_keyring, none).status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(RowVersionTableTest, KeepsTheNewestVersionOfDenseSparseAndOutOfOrderIds) {
  RowVersionTable table;
  table.Reserve(4);
  EXPECT_FALSE(table.Find(1).has_value());
  table.Note(1, 50);
  table.Note(1, 40);  // older: the newest stays
  table.Note(2, 60);
  EXPECT_EQ(table.Find(1), 50);
  EXPECT_EQ(table.Find(2), 60);
  EXPECT_FALSE(table.Find(0).has_value());
  EXPECT_FALSE(table.Find(3).has_value());
  // Far beyond the rows known: kept aside; then the ids between arrive and the array covers it.
  const int64_t far = 20'000;
  table.Note(far, 7);
  table.Note(-5, 8);  // never in the array
  EXPECT_EQ(table.Find(far), 7);
  EXPECT_EQ(table.Find(-5), 8);
  for (int64_t id = 3; id <= far; ++id) table.Note(id, id);
  EXPECT_EQ(table.Find(far), far);  // max(7, far)
  EXPECT_EQ(table.Find(1), 50);
  EXPECT_EQ(table.size(), static_cast<size_t>(far) + 1);  // ids 1 .. far and -5
  size_t visited = 0;
  int64_t last = -1;
  bool ascending = true;
  table.ForEach([&](int64_t id, int64_t version) {
    ++visited;
    if (id >= 0) {
      ascending = ascending && id > last;
      last = id;
    }
    EXPECT_EQ(table.Find(id), version);
  });
  EXPECT_EQ(visited, table.size());
  EXPECT_TRUE(ascending);
}

}  // namespace
}  // namespace bulwark
