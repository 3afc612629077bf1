// The store-wide history chain (issue #18 point 6 (i)): a link and a head that Python's hmac
// reproduces from doc/entry_format.md; an untouched store verifies clean (also after the upgrade
// that links the events of an older store); deleting, renumbering or reordering events, or
// rolling a row back with its later events deleted, is reported by verify and makes reads fail
// closed; a write after a truncated tail is refused instead of signing over it.
#include "store/history_chain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/hex.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "store/memory_store.h"
#include "testing/counting_env.h"
#include "testing/exec_sql.h"
#include "testing/lexical_store.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;

TEST(HistoryChainVectorTest, LinkAndHeadMatchAnIndependentComputation) {
  testing::TempDir dir;
  testing::CountingEnv env;  // key 1 is the bytes 00 01 ... 1f
  auto keyring = Keyring::Create(dir.path() / "keyring.json", &env);
  ASSERT_THAT(keyring, IsOk());
  Signer signer(&*keyring);
  HistoryChain chain(&signer);
  HistoryEvent ev;
  ev.seq = 7;
  ev.entry_id = "01J0000000000000000000000A";
  ev.name_space = "ns";
  ev.event = "add";
  ev.actor = "alice";
  ev.at_us = 1700000000000000;
  ev.detail = {{"text", "not in the link"}};
  std::string previous;
  for (int i = 32; i < 64; ++i) previous.push_back(static_cast<char>(i));
  // Python, from doc/entry_format.md ("History chain") alone:
  //   f = lambda b: struct.pack("<Q", len(b)) + b
  //   enc = b"bulwark.history.link.v1" + b"".join(f(x) for x in [b"1", b"7", b"ns",
  //         b"01J0000000000000000000000A", b"add", b"alice", b"1700000000000000", bytes(range(32, 64))])
  //   link = hmac.new(bytes(range(32)), enc, hashlib.sha256).digest()
  //   head = hmac.new(bytes(range(32)), b"bulwark.history.head.v1" + f(b"1") + f(b"7") + f(link),
  //                   hashlib.sha256).hexdigest()
  EXPECT_EQ(HexEncode(LinkEncoding(ev, 1, previous)),
            "62756c7761726b2e686973746f72792e6c696e6b2e763101000000000000003101000000000000003702000000000000"
            "006e731a0000000000000030314a303030303030303030303030303030303030303030304103000000000000006164"
            "640500000000000000616c6963651000000000000000313730303030303030303030303030302000000000000000"
            "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f");
  const HistoryLink link = chain.Link(ev, previous);
  EXPECT_EQ(link.key_id, 1u);
  EXPECT_EQ(HexEncode(link.link), "8db26e1238570250b2194fe904766d0742a30fddafabb03dfe1e05f29196cf79");
  const HistoryHead head = chain.Head(7, link.link);
  EXPECT_EQ(HexEncode(head.tag), "74338ee8c72639765a6bf5aed9c1cee7ebf0cf1d0e96f729ee316ad14de86d49");
  EXPECT_THAT(chain.CheckLink(ev, link, previous), IsOk());
  EXPECT_THAT(chain.CheckHead(head), IsOk());
  ev.detail = {{"text", "purged"}};
  EXPECT_THAT(chain.CheckLink(ev, link, previous), IsOk()) << "a purge rewrites details, not links";
  HistoryEvent moved = ev;
  moved.seq = 8;
  EXPECT_THAT(chain.CheckLink(moved, link, previous), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(chain.CheckLink(ev, link, ""), StatusIs(absl::StatusCode::kDataLoss));
  HistoryHead older = head;
  older.seq = 6;
  EXPECT_THAT(chain.CheckHead(older), StatusIs(absl::StatusCode::kDataLoss));
}

class HistoryChainStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Reopen();
    for (const char* text : {"flight to Lisbon on Tuesday", "dentist on Friday", "call the bank"}) {
      auto e = store_->Add("default", {.text = text}, "alice");
      ASSERT_THAT(e, IsOk());
      ids_.push_back(e->id);
    }
  }
  void Reopen() {
    store_.reset();
    auto store = dir_exists_ ? MemoryStore::Open(dir_.path(), testing::LexicalStoreOptions())
                             : MemoryStore::Create(dir_.path(), testing::LexicalStoreOptions());
    ASSERT_THAT(store, IsOk());
    store_ = *std::move(store);
    dir_exists_ = true;
  }
  void Sql(const std::string& sql) { testing::ExecSql(dir_.path() / "bulwark.db", sql); }
  std::vector<std::string> Problems() {
    auto report = store_->Verify();
    EXPECT_THAT(report, IsOk());
    std::vector<std::string> reasons;
    if (report.ok()) {
      for (const BadEvent& e : report->bad_events) reasons.push_back(e.reason);
    }
    return reasons;
  }
  void ExpectReadsFailClosed() {
    for (const std::string& id : ids_) {
      EXPECT_THAT(store_->Get("default", id),
                  StatusIs(absl::StatusCode::kDataLoss, HasSubstr("history chain")));
    }
  }

  testing::TempDir dir_;
  bool dir_exists_ = false;
  std::unique_ptr<MemoryStore> store_;
  std::vector<std::string> ids_;
};

TEST_F(HistoryChainStoreTest, AnUntouchedStoreVerifiesCleanAcrossChangesAndReopen) {
  ASSERT_THAT(store_->Update("default", ids_[0], {.text = "flight to Porto on Tuesday"}, "alice"), IsOk());
  ASSERT_THAT(store_->Delete("default", ids_[1], "alice"), IsOk());
  ASSERT_THAT(store_->Purge("default", ids_[0], "admin"), IsOk()) << "a purge re-signs earlier events";
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  Reopen();
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  EXPECT_THAT(store_->Get("default", ids_[2]), IsOk());
}

TEST_F(HistoryChainStoreTest, ADeletedEventBreaksTheChainAndReadsFailClosed) {
  ASSERT_THAT(store_->Add("default", {.text = "water the plants"}, "alice"), IsOk());
  store_.reset();
  Sql("DELETE FROM history WHERE seq = (SELECT MIN(seq) + 1 FROM history)");
  Reopen();
  EXPECT_THAT(store_->Get("default", ids_[0]), IsOk()) << "the head still names the newest event";
  EXPECT_THAT(Problems(), Contains(HasSubstr("the history chain breaks here")));
  ExpectReadsFailClosed();
}

TEST_F(HistoryChainStoreTest, RenumberedOrReorderedEventsAreReported) {
  store_.reset();
  Sql("UPDATE history SET seq = seq + 100 WHERE seq = (SELECT MIN(seq) FROM history)");
  Reopen();
  EXPECT_THAT(Problems(), Contains(HasSubstr("the history chain breaks here")));

  store_.reset();
  Sql("UPDATE history SET seq = seq - 100 WHERE seq > 100");  // back in place: whole again
  Reopen();
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  store_.reset();
  Sql("UPDATE history SET seq = -1 WHERE seq = 1; UPDATE history SET seq = 1 WHERE seq = 2; "
      "UPDATE history SET seq = 2 WHERE seq = -1;");
  Reopen();
  EXPECT_THAT(Problems(), Contains(HasSubstr("the history chain breaks here")));
  ExpectReadsFailClosed();
}

TEST_F(HistoryChainStoreTest, ARollbackWithItsLaterEventsDeletedIsCaught) {
  Sql("CREATE TABLE saved AS SELECT * FROM entries WHERE id = '" + ids_[2] + "'");
  ASSERT_THAT(store_->Quarantine("default", ids_[2], "admin", {"poison"}), IsOk());
  store_.reset();
  // The newest event is the quarantine: put the active row back and delete the event.
  Sql("DELETE FROM entries WHERE id = '" + ids_[2] +
      "'; INSERT INTO entries SELECT * FROM saved; DELETE FROM history WHERE seq = (SELECT MAX(seq) FROM "
      "history)");
  Reopen();
  ExpectReadsFailClosed();
  EXPECT_THAT(Problems(), Contains(HasSubstr("the signed history head names event")));
  EXPECT_THAT(store_->Add("default", {.text = "a new memory"}, "alice"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("writes are refused")))
      << "a write must not sign over the truncated tail";
}

// The backend keeps the head text it last wrote and does not parse it again while the stored text
// is the same; a change made by another connection while the store is open is still read and
// checked before the next write.
TEST_F(HistoryChainStoreTest, ATailOrHeadChangedWhileTheStoreIsOpenRefusesTheNextWrite) {
  ASSERT_THAT(store_->Add("default", {.text = "water the plants"}, "alice"), IsOk());
  Sql("CREATE TABLE saved_event AS SELECT * FROM history WHERE seq = (SELECT MAX(seq) FROM history)");
  Sql("DELETE FROM history WHERE seq = (SELECT MAX(seq) FROM history)");
  EXPECT_THAT(store_->Add("default", {.text = "after the truncation"}, "alice"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("writes are refused")));
  Sql("INSERT INTO history SELECT * FROM saved_event");
  ASSERT_THAT(store_->Add("default", {.text = "the tail is back"}, "alice"), IsOk());
  Sql("UPDATE meta SET value = replace(value, '\"seq\":', '\"seq\":1') WHERE key = 'history_head'");
  EXPECT_THAT(store_->Add("default", {.text = "under a replaced head"}, "alice"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("writes are refused")));
  Sql("UPDATE meta SET value = 'not json' WHERE key = 'history_head'");
  EXPECT_THAT(store_->Add("default", {.text = "under a garbled head"}, "alice"),
              StatusIs(absl::StatusCode::kDataLoss));
}

// An append skips the head's HMAC only when the stored head is the very text the store wrote or
// checked: a head naming the right event under a forged tag is refused at every write, and the
// genuine head, put back, is accepted again.
TEST_F(HistoryChainStoreTest, AHeadWithAForgedTagIsRefusedEveryTime) {
  ASSERT_THAT(store_->Add("default", {.text = "water the plants"}, "alice"), IsOk());
  ASSERT_THAT(store_->Add("default", {.text = "feed the cat"}, "alice"), IsOk());
  Sql("CREATE TABLE saved_head AS SELECT value FROM meta WHERE key = 'history_head'");
  // The last hex digit of the tag (the text ends with `<digit>"}`), changed.
  Sql("UPDATE meta SET value = substr(value, 1, length(value) - 3) || CASE substr(value, -3, 1) WHEN '0' "
      "THEN '1' ELSE '0' END || '\"}' WHERE key = 'history_head'");
  for (int attempt = 0; attempt < 2; ++attempt) {
    EXPECT_THAT(store_->Add("default", {.text = "under a forged head"}, "alice"),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("writes are refused")))
        << attempt;
  }
  Sql("UPDATE meta SET value = (SELECT value FROM saved_head) WHERE key = 'history_head'");
  EXPECT_THAT(store_->Add("default", {.text = "under the genuine head"}, "alice"), IsOk());
}

// An add takes the chain's tail from memory only while no other connection has committed since
// this store's last add (sqlite_backend.h, committed_tail_): two stores on one directory (as two
// processes are) that take turns, in runs, still append one unbroken chain, before and after a
// restart. A tail taken stale would reuse a seq (refused) or link after the wrong event.
TEST_F(HistoryChainStoreTest, AddsFromTwoStoresTakingTurnsKeepOneChain) {
  auto other = MemoryStore::Open(dir_.path(), testing::LexicalStoreOptions());
  ASSERT_THAT(other, IsOk());
  for (int i = 0; i < 12; ++i) {
    MemoryStore& writer = (i / 2) % 3 == 2 ? **other : *store_;  // runs of four and of two
    ASSERT_THAT(writer.Add("default", {.text = "memory number " + std::to_string(i)}, "alice"), IsOk()) << i;
  }
  ASSERT_THAT((*other)->Delete("default", ids_[0], "alice"), IsOk());
  ASSERT_THAT(store_->Add("default", {.text = "after the other store's delete"}, "alice"), IsOk());
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  other->reset();
  Reopen();
  ASSERT_THAT(store_->Add("default", {.text = "after the restart"}, "alice"), IsOk());
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  auto history = store_->History("default", ids_[0]);
  ASSERT_THAT(history, IsOk());
  EXPECT_EQ(history->back().event, "delete");
}

TEST_F(HistoryChainStoreTest, AStoreFromBeforeTheChainIsLinkedOnceAndVerifiesClean) {
  store_.reset();
  // The layout of schema version 3: no links, no head.
  Sql("ALTER TABLE history DROP COLUMN link; ALTER TABLE history DROP COLUMN link_key_id; "
      "DELETE FROM meta WHERE key = 'history_head'; UPDATE meta SET value = '3' WHERE key = "
      "'schema_version'");
  Reopen();
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  ASSERT_THAT(store_->Add("default", {.text = "after the upgrade"}, "alice"), IsOk());
  EXPECT_THAT(Problems(), ::testing::IsEmpty());
  store_.reset();
  Sql("UPDATE history SET link = x'' WHERE seq = (SELECT MAX(seq) FROM history)");
  Reopen();
  EXPECT_THAT(Problems(), Contains(HasSubstr("not linked into the history chain"))) << "linked only once";
}

}  // namespace
}  // namespace bulwark
