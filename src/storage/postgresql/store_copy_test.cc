// CopyStoreRows (storage/store_copy.h) between the engines, table by table: rows written through
// the repositories of an SQLite store (meta, query history, calibrations, principals and keys,
// gate rows, honeypot runs, blocks and settings, audit rows with and without tags) come out of the
// PostgreSQL copy byte for byte, and again out of a copy back into a new directory; the copies'
// counters continue after the copied rows; a target that holds rows is refused.
#include "storage/store_copy.h"

#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "storage/postgresql/testing/pg_test_environment.h"
#include "storage/storage_opener.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

const std::string kBlockKey("blk\0\xff", 5);

void Fill(StorageRepositories& s) {
  ASSERT_THAT(s.entries->PutMeta("custom_key", "custom value"), IsOk());
  const std::vector<std::vector<float>> queries = {{1.5f, -2.0f}, {0.25f, 8.0f}};
  ASSERT_THAT(s.defense_state->SaveQueryHistory("ns", 7, queries, 0, false), IsOk());
  ASSERT_THAT(s.defense_state->PutCalibration("ns", R"({"mu":1})"), IsOk());
  ASSERT_THAT(
      s.access->InsertPrincipal({"alice", "writer", R"(["ns"])", false, 100, 2, std::string(32, '\x01')}),
      IsOk());
  ASSERT_THAT(
      s.access->InsertKey({"k1", "alice", std::string(64, 'e'), 200, true, 2, std::string(32, '\x02')}),
      IsOk());
  ASSERT_THAT(s.gate->Save({"ns", "flag", "fp", 300, "{}", std::string("model\0bytes", 11), 2, "tag"}),
              IsOk());
  HoneypotRun run;
  run.name_space = "ns";
  run.at_us = 400;
  run.batch = 2;
  run.metrics = "{}";
  run.covered_ids = R"(["a"])";
  run.pot_ids = R"(["p"])";
  ASSERT_THAT(s.honeypot->AddRun(run), IsOk());
  ASSERT_THAT(s.honeypot->RemoveRuns("ns", 500), IsOk());
  ASSERT_THAT(s.honeypot->PutBlock({"ns", kBlockKey, std::string("st\0ate", 6)}), IsOk());
  ASSERT_THAT(s.honeypot->PutSetting({"ns", "block", 7}), IsOk());
  ASSERT_THAT(s.audit->Append([](const AuditHead&) -> absl::StatusOr<std::vector<AuditRow>> {
    AuditRow signed_row;
    signed_row.at_us = 600;
    signed_row.principal = "alice";
    signed_row.returned_ids = R"(["a"])";
    signed_row.detail = "{}";
    signed_row.key_id = 2;
    signed_row.tag = std::string("\0tag", 4);
    AuditRow unsigned_row = signed_row;
    unsigned_row.tag.reset();
    unsigned_row.key_id = 0;
    return std::vector<AuditRow>{signed_row, unsigned_row};
  }),
              IsOk());
}

// Everything Fill wrote, read back through `location`'s repositories (`runs` honeypot runs: the
// first is Fill's), then one more run added.
void ExpectFilled(const std::string& location, size_t runs_expected) {
  SCOPED_TRACE(location);
  auto s = OpenStorage(location, /*create=*/false);
  ASSERT_THAT(s, IsOk());
  EXPECT_EQ(*s->entries->GetMeta("custom_key"), std::optional<std::string>("custom value"));
  std::vector<std::pair<uint64_t, std::vector<float>>> queries;
  ASSERT_THAT(s->defense_state->ScanQueryHistory([&](std::string_view, uint64_t seq, std::vector<float> q) {
    queries.emplace_back(seq, std::move(q));
    return absl::OkStatus();
  }),
              IsOk());
  ASSERT_EQ(queries.size(), 2u);
  EXPECT_EQ(queries[1].first, 8u);
  EXPECT_EQ(queries[1].second, (std::vector<float>{0.25f, 8.0f}));
  auto alice = s->access->FindPrincipal("alice");
  ASSERT_THAT(alice, IsOk());
  ASSERT_TRUE(alice->has_value());
  EXPECT_EQ((*alice)->tag, std::string(32, '\x01'));
  auto key = s->access->FindKey("k1");
  ASSERT_THAT(key, IsOk());
  ASSERT_TRUE(key->has_value());
  EXPECT_TRUE((*key)->revoked);
  auto gate = s->gate->Find("ns");
  ASSERT_THAT(gate, IsOk());
  ASSERT_TRUE(gate->has_value());
  EXPECT_EQ((*gate)->model, std::string("model\0bytes", 11));
  std::vector<HoneypotRun> runs;
  ASSERT_THAT(s->honeypot->ScanRuns("ns",
                                    [&](const HoneypotRun& r) {
                                      runs.push_back(r);
                                      return absl::OkStatus();
                                    }),
              IsOk());
  ASSERT_EQ(runs.size(), runs_expected);
  EXPECT_EQ(runs[0].batch, 2);
  EXPECT_EQ(runs[0].removed_at_us, 500);
  std::vector<HoneypotBlock> blocks;
  ASSERT_THAT(s->honeypot->ScanBlocks([&](const HoneypotBlock& b) {
    blocks.push_back(b);
    return absl::OkStatus();
  }),
              IsOk());
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].key, kBlockKey);
  EXPECT_EQ(blocks[0].state, std::string("st\0ate", 6));
  std::vector<AuditRow> audit;
  ASSERT_THAT(s->audit->Scan([&](const AuditRow& r) {
    audit.push_back(r);
    return absl::OkStatus();
  }),
              IsOk());
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0].tag, std::string("\0tag", 4));
  EXPECT_EQ(audit[1].tag, std::nullopt);
  // The counters continue after the copied rows.
  HoneypotRun next;
  next.name_space = "ns";
  next.metrics = next.covered_ids = next.pot_ids = "[]";
  auto run_id = s->honeypot->AddRun(next);
  ASSERT_THAT(run_id, IsOk());
  EXPECT_GT(*run_id, runs.back().run_id);
}

TEST(StoreCopyTest, EveryTableRoundTripsThroughPostgres) {
  ::bulwark::testing::TempDir dir;
  const std::string source = (dir.path() / "source").string();
  std::filesystem::create_directories(source);
  {
    auto s = OpenStorage(source, /*create=*/true);
    ASSERT_THAT(s, IsOk());
    Fill(*s);
  }
  auto cluster = ::bulwark::testing::SharedPgCluster();
  ASSERT_THAT(cluster, IsOk());
  ASSERT_THAT((*cluster)->CreateDatabase("copied"), IsOk());
  const std::string url = absl::StrCat("postgresql://postgres@127.0.0.1:", (*cluster)->port(), "/copied");
  ASSERT_THAT(OpenStorage(url, /*create=*/true), IsOk());
  auto copied = CopyStoreRows(source, url);
  ASSERT_THAT(copied, IsOk());
  ASSERT_EQ(copied->size(), 13u);
  EXPECT_EQ(copied->back().table, "audit");
  EXPECT_EQ(copied->back().rows, 2);
  ExpectFilled(url, 1);  // adds a honeypot run: the copy back has two
  EXPECT_THAT(CopyStoreRows(source, url), StatusIs(absl::StatusCode::kFailedPrecondition))
      << "the target holds rows";

  const std::string back = (dir.path() / "back").string();
  std::filesystem::create_directories(back);
  ASSERT_THAT(OpenStorage(back, /*create=*/true), IsOk());
  ASSERT_THAT(CopyStoreRows(url, back), IsOk());
  ExpectFilled(back, 2);
}

}  // namespace
}  // namespace bulwark
