// `bulwark honeypots fit|show|list|remove`, driven in-process through cli::Run against a store in a
// temp dir: pots are written through the privileged system path (kind honeypot, source system,
// principal bulwark:honeypots, never screened), each run's metrics are recorded, search results are
// byte-identical with pots on and off (vector and hybrid ranking), stacking adds a batch, the fit
// stores its extraction-intent table (removed with the pots), `honeypots mode` and `sessions
// unblock` write admin-only audit records as the HTTP routes do, and bad input changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "cli/cli_test_util.h"
#include "embed/wordnet_canonicalizer.h"
#include "honeypot/fit_test_data.h"
#include "honeypot/session_monitor.h"
#include "retrieval/honeypot_guard.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {
namespace {

using ::testing::HasSubstr;

class HoneypotCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok()) {
      GTEST_SKIP() << "wordnet-base is not installed";
    }
    ASSERT_EQ(Cli({"init"}).code, 0);
    const std::string corpora = std::string(BULWARK_SOURCE_DIR) + "/data/corpora/";
    Import("memories.jsonl",
           honeypot::testing::ReadJsonlField(corpora + "benign_memories.jsonl", "text", 300));
    benign_ = honeypot::testing::ReadJsonlField(corpora + "benign_queries.jsonl", "query", 200);
    WriteQueries("benign.jsonl", benign_);
    WriteQueries("attack.jsonl", honeypot::testing::ExtractionAttackQueries());
  }
  CliResult Cli(const std::vector<std::string>& args) { return RunCli(dir_ / "store", args); }
  CliResult InNs(std::vector<std::string> args) {
    args.insert(args.begin(), {"--json", "-n", "travel"});
    return Cli(args);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void WriteQueries(const std::string& name, const std::vector<std::string>& queries) {
    std::ofstream f(dir_ / name);
    for (const std::string& q : queries) f << nlohmann::json{{"query", q}, {"session", "s"}}.dump() << "\n";
  }
  void Import(const std::string& name, const std::vector<std::string>& texts) {
    {
      std::ofstream f(dir_ / name);
      for (size_t i = 0; i < texts.size(); ++i) {
        f << nlohmann::json{{"text", texts[i]}, {"metadata", {{"parity", i % 2 ? "odd" : "even"}}}}.dump()
          << "\n";
      }
    }
    CliResult r = InNs({"add", "-f", Path(name)});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  CliResult Fit(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {
        "honeypots", "fit", "--attack-log", Path("attack.jsonl"), "--benign-queries", Path("benign.jsonl"),
        "--seed",    "7"};
    args.insert(args.end(), extra.begin(), extra.end());
    return InNs(args);
  }
  // What callers see for a fixed set of searches: benign and attack queries, large k, filters,
  // with vector and with hybrid ranking (pots take no part in the lexical index). Two queries per
  // ranking go through the CLI's `search`; the rest through one store opened in-process (the
  // same MemoryStore::Search), so that the test does not open the store ~250 times (issue #13
  // point 5: CI time under ASan).
  std::string SearchOutputs() {
    std::string all;
    for (const char* ranking : {"vector", "hybrid"}) {
      CliResult set = InNs({"retrieval", "set", ranking});
      EXPECT_EQ(set.code, 0) << set.err;
      all += ranking;
      all += SearchOutputsOf();
    }
    return all;
  }
  std::string SearchOutputsOf() {
    std::string all;
    std::vector<std::string> queries(benign_.begin(), benign_.begin() + 10);
    for (const std::string& q : honeypot::testing::ExtractionAttackQueries()) queries.push_back(q);
    for (const std::string& q : {queries.front(), queries.back()}) {
      CliResult r = InNs({"search", q, "-k", "7", "--filter", R"({"parity":"odd"})"});
      EXPECT_EQ(r.code, 0) << r.err;
      all += r.out;
    }
    auto store = MemoryStore::Open(dir_ / "store", StoreOptions{});
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return all;
    for (const std::string& q : queries) {
      for (const auto& [k, filter] : {std::pair<int, nlohmann::json>{50, nlohmann::json::object()},
                                      std::pair<int, nlohmann::json>{7, {{"parity", "odd"}}}}) {
        SearchOptions options;
        options.k = k;
        options.metadata_filter = filter;
        options.record_query = false;
        auto result = (*store)->Search("travel", q, options);
        EXPECT_TRUE(result.ok()) << result.status();
        if (!result.ok()) continue;
        for (const SearchHit& h : result->hits) {
          all += nlohmann::json{{"id", h.entry.id},
                                {"score", h.score},
                                {"text", h.entry.text},
                                {"kind", static_cast<int>(h.entry.kind)}}
                     .dump();
        }
        all += "\n";
      }
    }
    return all;
  }
  // How many intent tables the store holds.
  int IntentTables() {
    auto repo = SqliteHoneypotRepository::Open(dir_ / "store" / "bulwark.db");
    EXPECT_TRUE(repo.ok()) << repo.status();
    int n = 0;
    if (repo.ok()) {
      EXPECT_TRUE((*repo)
                      ->ScanIntentTables([&](const HoneypotIntentTable&) {
                        ++n;
                        return absl::OkStatus();
                      })
                      .ok());
    }
    return n;
  }
  std::vector<Entry> StoredPots() {
    auto store = MemoryStore::Open(dir_ / "store", StoreOptions{});
    EXPECT_TRUE(store.ok()) << store.status();
    std::vector<Entry> pots;
    if (!store.ok()) return pots;
    EXPECT_TRUE((*store)
                    ->impl()
                    .entries
                    ->ExportHoneypots("travel",
                                      [&](const Entry& e) {
                                        pots.push_back(e);
                                        return absl::OkStatus();
                                      })
                    .ok());
    return pots;
  }

  ::bulwark::testing::TempDir dir_;
  std::vector<std::string> benign_;
};

TEST_F(HoneypotCliTest, FitWritesSystemPotsRecordsTheRunAndLeavesSearchUnchanged) {
  const std::string before = SearchOutputs();
  CliResult fit = Fit();
  ASSERT_EQ(fit.code, 0) << fit.err;
  const nlohmann::json run = fit.json();
  const int pots = run["pots"].get<int>();
  EXPECT_GE(pots, 1);
  EXPECT_EQ(run["batch"], 1);
  EXPECT_EQ(run["metrics"]["seed"], 7);
  EXPECT_DOUBLE_EQ(run["metrics"]["ratio"].get<double>(), 0.03);
  EXPECT_DOUBLE_EQ(run["metrics"]["unseen_weight"].get<double>(), 0.5);
  EXPECT_GT(run["metrics"]["training"]["auroc"].get<double>(), 0.5);
  EXPECT_LT(run["metrics"]["indexed"]["privacy_max"].get<double>(),
            run["metrics"]["privacy_bound"].get<double>());
  // The intent table, calibrated on the same queries and stored signed for serve.
  ASSERT_TRUE(run.contains("intent")) << run.dump();
  EXPECT_EQ(run["intent"]["benign_queries"].get<size_t>(), benign_.size());
  EXPECT_EQ(IntentTables(), 1);
  // Its cap lets two requests block in rounds without pots (honeypot/intent_cap.h): log 9 / 2 + log 2.
  const std::vector<double> intent_llr = run["intent"]["llr"].get<std::vector<double>>();
  ASSERT_FALSE(intent_llr.empty());
  for (double l : intent_llr) EXPECT_LE(l, std::log(9.0) / 2 + std::log(2.0) + 1e-5);
  // The cap binds on this fit's queries (log(p1/p0) is larger for some category): above the old 1.1.
  EXPECT_GT(*std::max_element(intent_llr.begin(), intent_llr.end()), 1.1 + 1e-6);

  const std::vector<Entry> stored = StoredPots();
  ASSERT_EQ(static_cast<int>(stored.size()), pots);
  for (const Entry& p : stored) {
    EXPECT_EQ(p.kind, Kind::kHoneypot);
    EXPECT_EQ(p.source, Source::kSystem);
    EXPECT_EQ(p.principal, "bulwark:honeypots");
    EXPECT_EQ(p.state, State::kActive);  // never quarantined: the gate does not screen pots
    EXPECT_TRUE(p.report.is_null() || !p.report.contains("quarantine")) << p.report.dump();
  }
  EXPECT_EQ(SearchOutputs(), before);  // pots on vs off: byte-identical hits

  CliResult show = InNs({"honeypots", "show"});
  ASSERT_EQ(show.code, 0) << show.err;
  ASSERT_EQ(show.json()["runs"].size(), 1u);
  EXPECT_EQ(show.json()["runs"][0]["metrics"], run["metrics"]);
  CliResult list = InNs({"honeypots", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_EQ(static_cast<int>(list.json().size()), pots);
  CliResult text = Cli({"-n", "travel", "honeypots", "show"});
  EXPECT_THAT(text.out, HasSubstr("training AUROC"));
}

TEST_F(HoneypotCliTest, RefitNeedsStackAndStackAddsABatch) {
  ASSERT_EQ(Fit().code, 0);
  const size_t first = StoredPots().size();
  CliResult again = Fit();
  EXPECT_EQ(again.code, 1);
  EXPECT_THAT(again.err, HasSubstr("--stack"));
  EXPECT_EQ(StoredPots().size(), first);  // nothing changed

  EXPECT_NE(Fit({"--stack"}).code, 0);  // no memory is new: nothing to cover
  const std::string corpora = std::string(BULWARK_SOURCE_DIR) + "/data/corpora/";
  std::vector<std::string> more =
      honeypot::testing::ReadJsonlField(corpora + "benign_memories.jsonl", "text", 500);
  Import("more.jsonl", std::vector<std::string>(more.begin() + 300, more.end()));
  CliResult stacked = Fit({"--stack"});
  ASSERT_EQ(stacked.code, 0) << stacked.err;
  EXPECT_EQ(stacked.json()["batch"], 2);
  EXPECT_EQ(stacked.json()["metrics"]["covered_memories"].get<int>(), 200);
  EXPECT_GT(StoredPots().size(), first);
  EXPECT_EQ(InNs({"honeypots", "show"}).json()["runs"].size(), 2u);
}

TEST_F(HoneypotCliTest, RemoveDeletesPotsAndRetiresRuns) {
  CliResult first = Fit();
  ASSERT_EQ(first.code, 0) << first.err;
  const size_t pots = StoredPots().size();
  CliResult removed = InNs({"honeypots", "remove"});
  ASSERT_EQ(removed.code, 0) << removed.err;
  EXPECT_EQ(removed.json()["pots_removed"].get<size_t>(), pots);
  EXPECT_EQ(removed.json()["runs_retired"], 1);
  EXPECT_TRUE(StoredPots().empty());
  EXPECT_TRUE(InNs({"honeypots", "show"}).json()["runs"].empty());
  EXPECT_EQ(removed.json()["intent_tables_removed"], 1);
  EXPECT_EQ(IntentTables(), 0);
  // A fresh fit is allowed again; without the unseen-family share its count table reads an
  // observation with no pots as stronger evidence of a benign session.
  CliResult refit = Fit({"--unseen-weight", "0"});
  ASSERT_EQ(refit.code, 0) << refit.err;
  EXPECT_DOUBLE_EQ(refit.json()["metrics"]["unseen_weight"].get<double>(), 0.0);
  // No bound on a pot-less round then (the fit's table has no clamp): the intent cap stays 1.1.
  for (double l : refit.json()["intent"]["llr"].get<std::vector<double>>()) EXPECT_LE(l, 1.1);
  const auto llr = [](const CliResult& r) {
    return r.json()["metrics"]["indexed"]["calibrated_count_llr"].get<std::vector<double>>();
  };
  ASSERT_FALSE(llr(refit).empty());
  EXPECT_LT(llr(refit)[0], llr(first)[0]);
}

TEST_F(HoneypotCliTest, BadInputChangesNothing) {
  CliResult missing = InNs(
      {"honeypots", "fit", "--attack-log", Path("nope.jsonl"), "--benign-queries", Path("benign.jsonl")});
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("nope.jsonl"));
  CliResult ratio = Fit({"--ratio", "0.9"});
  EXPECT_NE(ratio.code, 0);
  EXPECT_NE(Fit({"--unseen-weight", "1"}).code, 0);
  EXPECT_NE(Fit({"--unseen-weight", "-0.1"}).code, 0);
  CliResult empty_ns = Cli({"--json", "-n", "empty", "honeypots", "fit", "--attack-log", Path("attack.jsonl"),
                            "--benign-queries", Path("benign.jsonl")});
  EXPECT_EQ(empty_ns.code, 1);
  EXPECT_TRUE(StoredPots().empty());
  EXPECT_TRUE(InNs({"honeypots", "show"}).json()["runs"].empty());
}

TEST_F(HoneypotCliTest, SessionsListAndUnblockTheStoredBlocks) {
  {
    auto repo = SqliteHoneypotRepository::Open(dir_ / "store" / "bulwark.db");
    ASSERT_TRUE(repo.ok()) << repo.status();
    honeypot::KeyState state;
    state.sprt = {.statistic = 2.2, .rounds = 3, .rounds_since_reset = 3, .decided_round = 3, .h1 = true};
    state.pot_hits = 11;
    state.last_seen_us = state.decided_at_us = 1000;
    HoneypotBlock block{"travel", "", honeypot::EncodeKeyState(state)};
    honeypot::AppendKeyBytes({"travel", "mallory", ""}, honeypot::KeyLevel::kPrincipal, &block.key);
    ASSERT_TRUE((*repo)->PutBlock(block).ok());
  }
  CliResult list = InNs({"sessions", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  ASSERT_EQ(list.json().size(), 1u) << list.out;
  EXPECT_EQ(list.json()[0]["principal"], "mallory");
  EXPECT_EQ(list.json()[0]["pot_hits"], 11);
  EXPECT_TRUE(Cli({"--json", "-n", "other", "sessions", "list"}).json().empty());

  CliResult mode = InNs({"honeypots", "mode", "block", "--k-obs", "3"});
  ASSERT_EQ(mode.code, 0) << mode.err;
  EXPECT_NE(InNs({"honeypots", "mode", "panic"}).code, 0);
  {
    auto store = MemoryStore::Open(dir_ / "store", StoreOptions{});
    ASSERT_TRUE(store.ok()) << store.status();
    auto repo = SqliteHoneypotRepository::Open(dir_ / "store" / "bulwark.db");
    ASSERT_TRUE(repo.ok()) << repo.status();
    auto guard = HoneypotGuard::Create({}, (*store)->impl().entries.get(), repo->get(), nullptr);
    ASSERT_TRUE(guard.ok()) << guard.status();
    EXPECT_EQ((*guard)->Mode("travel"), HoneypotMode::kBlock);
    EXPECT_EQ((*guard)->KObs("travel"), 3);
    EXPECT_EQ((*guard)->Mode("other"), HoneypotMode::kMonitor);  // the default
    // The stored principal block is enforced in block mode.
    EXPECT_FALSE((*guard)->CheckAllowed({"travel", "mallory", ""}).ok());
  }

  CliResult wrong = InNs({"sessions", "unblock", "--principal", "mallory", "--session", "s1"});
  EXPECT_EQ(wrong.code, 1);  // only the principal level is blocked
  CliResult unblock = InNs({"sessions", "unblock", "--principal", "mallory"});
  ASSERT_EQ(unblock.code, 0) << unblock.err;
  EXPECT_TRUE(InNs({"sessions", "list"}).json().empty());

  // Both changes are audited as the HTTP routes audit theirs (the refused ones are not).
  CliResult audit = InNs({"audit"});
  ASSERT_EQ(audit.code, 0) << audit.err;
  const nlohmann::json records = audit.json()["records"];
  std::vector<std::string> operations;
  for (const nlohmann::json& r : records) {
    EXPECT_EQ(r["principal"], "bulwark:cli");
    EXPECT_EQ(r["detail"]["via"], "cli");
    operations.push_back(r["operation"]);
    if (r["operation"] == "honeypot_setting") {
      EXPECT_EQ(r["detail"]["before"]["mode"], "monitor");
      EXPECT_EQ(r["detail"]["after"]["mode"], "block");
      EXPECT_EQ(r["detail"]["after"]["k_obs"], 3);
    } else {
      EXPECT_EQ(r["detail"]["unblocked_principal"], "mallory");
    }
  }
  EXPECT_THAT(operations, ::testing::UnorderedElementsAre("honeypot_setting", "unblock_session"));
}

}  // namespace
}  // namespace bulwark::cli
