// SearchResponseJson and AddResponseJson (the search and add answers, written without a nlohmann
// tree) against the nlohmann objects they replaced: the same bytes for entries with every field,
// unusual text and metadata, reports (full and hidden view), a stripped query and a smoothed
// answer, an empty result, one added entry and a batch.
#include <gtest/gtest.h>

#include <cmath>

#include "core/hex.h"
#include "server/service.h"

namespace bulwark::server {
namespace {

// The answer as the route built it before: a nlohmann object, dumped.
std::string Reference(const DefendedSearchResult& result) {
  nlohmann::json hits = nlohmann::json::array();
  for (const SearchHit& hit : result.search.hits) {
    nlohmann::json j = EntryJson(hit.entry, ReportView::kFull);
    j["score"] = hit.score;
    hits.push_back(std::move(j));
  }
  nlohmann::json body = {{"hits", std::move(hits)},
                         {"withheld_candidates", result.search.rejected_candidates},
                         {"k", result.k},
                         {"gate", ToJson(result.gate)}};
  if (result.gate.decision == GateDecision::kStrip) body["gate"]["query"] = result.retrieved_query;
  if (result.smoothed) body["smoothed"] = ToJson(*result.smoothed);
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Entry MakeEntry(int i) {
  Entry e;
  e.id = "01HZZZZZZZZZZZZZZZZZZZZZ" + std::to_string(10 + i);
  e.name_space = "alice";
  e.text = i % 2 ? "plain memory text" : "quote \" backslash \\ newline \n tab \t ctrl \x01 unicode é€😀";
  e.metadata = i % 2 ? nlohmann::json::object()
                     : nlohmann::json{{"topic", "travel"}, {"tags", {"a", "b"}}, {"n", 3}, {"x", 0.5}};
  e.principal = "agent-1";
  e.source = i % 2 ? Source::kUser : Source::kSystem;
  e.kind = i % 3 ? Kind::kMemory : Kind::kHoneypot;
  e.state = i % 2 ? State::kActive : State::kQuarantined;
  e.created_at_us = 1795303707783756 + i;
  e.updated_at_us = 1795303707783999 + i;
  e.key_id = static_cast<uint32_t>(i + 1);
  e.tag = std::string(32, static_cast<char>(0xa0 + i));
  if (i == 2) e.report = {{"flagged", true}, {"scores", {{"memsad", 1.25}}}};
  return e;
}

TEST(SearchResponseJsonTest, MatchesTheNlohmannObjectByteForByte) {
  DefendedSearchResult result;
  result.k = 5;
  result.gate.mode = GateMode::kReject;
  result.gate.decision = GateDecision::kPass;
  result.gate.score_kind = GateScore::kLda;
  result.gate.score = -0.41;
  result.gate.threshold = -0.06;
  result.gate.scores = GateScores{{0.125, 3.5, std::nan("")}};
  const float scores[] = {0.9f, 0.5f, 1.0f, 0.0f, -0.3333333f};
  for (int i = 0; i < 5; ++i) result.search.hits.push_back({MakeEntry(i), scores[i]});
  result.search.rejected_candidates = 2;
  EXPECT_EQ(SearchResponseJson(result, ReportView::kFull), Reference(result));

  result.gate.decision = GateDecision::kStrip;
  result.gate.cleaned_query = "where \"is\" it";
  result.gate.removed_tokens = {"ignore", "previous"};
  result.retrieved_query = "where \"is\" it";
  EXPECT_EQ(SearchResponseJson(result, ReportView::kFull), Reference(result));

  SmoothedAnswer smoothed;
  smoothed.abstained = false;
  smoothed.answer = "Lisbon";
  smoothed.majority_runs = 7;
  smoothed.responder = "extractive";
  smoothed.judge = "embedding";
  smoothed.seed_hex = "00ff";
  result.smoothed = smoothed;
  EXPECT_EQ(SearchResponseJson(result, ReportView::kFull), Reference(result));
}

// Issue #18 point 7: a hit's write-gate report and the query gate's scores reach admins only; the
// hidden view is the full one minus "report" and minus the gate's numbers, byte for byte.
TEST(SearchResponseJsonTest, HiddenViewDropsOnlyTheReportAndTheGateScores) {
  DefendedSearchResult result;
  result.k = 5;
  result.gate.mode = GateMode::kReject;
  result.gate.decision = GateDecision::kPass;
  result.gate.score_kind = GateScore::kLda;
  result.gate.score = -0.41;
  result.gate.threshold = -0.06;
  for (int i = 0; i < 5; ++i) result.search.hits.push_back({MakeEntry(i), 0.5f});
  ASSERT_TRUE(result.search.hits[2].entry.report.contains("scores"));
  nlohmann::json full = nlohmann::json::parse(SearchResponseJson(result, ReportView::kFull));
  nlohmann::json hidden = nlohmann::json::parse(SearchResponseJson(result, ReportView::kHidden));
  ASSERT_TRUE(full["hits"][2].contains("report"));
  for (auto& hit : full["hits"]) hit.erase("report");
  ASSERT_TRUE(full["gate"].contains("threshold"));
  full["gate"] = {{"decision", full["gate"]["decision"]},
                  {"flagged", full["gate"]["flagged"]},
                  {"mode", full["gate"]["mode"]}};
  EXPECT_EQ(hidden, full);
  EXPECT_FALSE(EntryJson(result.search.hits[2].entry, ReportView::kHidden).contains("report"));
  EXPECT_TRUE(EntryJson(result.search.hits[2].entry, ReportView::kFull).contains("report"));
}

TEST(SearchResponseJsonTest, EmptyResult) {
  DefendedSearchResult result;
  result.k = 3;
  EXPECT_EQ(SearchResponseJson(result, ReportView::kFull), Reference(result));
  EXPECT_TRUE(nlohmann::json::parse(SearchResponseJson(result, ReportView::kFull))["hits"].empty());
}

// The add answer as the route built it before: {"entry": EntryJson} or {"entries": [...]}, dumped
// as HttpServer dumps a Reply's body.
std::string AddReference(const std::vector<Entry>& entries, bool batch, ReportView view) {
  nlohmann::json out = nlohmann::json::array();
  for (const Entry& e : entries) out.push_back(EntryJson(e, view));
  const nlohmann::json body =
      batch ? nlohmann::json{{"entries", std::move(out)}} : nlohmann::json{{"entry", std::move(out[0])}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(AddResponseJsonTest, MatchesTheNlohmannObjectByteForByte) {
  std::vector<Entry> entries;
  for (int i = 0; i < 6; ++i) entries.push_back(MakeEntry(i));
  entries[3].text = "invalid UTF-8 ÿþ and a lone continuation ";
  entries[4].report = {{"gate", {{"decision", "quarantine"}, {"detectors", {{"validation", 2.5}}}}},
                       {"quarantine", {{"reasons", {"validation: rule x"}}}}};
  for (ReportView view : {ReportView::kFull, ReportView::kHidden}) {
    for (size_t i = 0; i < entries.size(); ++i) {
      const std::vector<Entry> one = {entries[i]};
      EXPECT_EQ(AddResponseJson(one, /*as_batch=*/false, view), AddReference(one, false, view)) << i;
      EXPECT_EQ(AddResponseJson(one, /*as_batch=*/true, view), AddReference(one, true, view)) << i;
    }
    EXPECT_EQ(AddResponseJson(entries, /*as_batch=*/true, view), AddReference(entries, true, view));
    EXPECT_EQ(AddResponseJson({}, /*as_batch=*/true, view), AddReference({}, true, view));
  }
  // Reports and metadata of every JSON type, written member by member by the writer.
  Entry odd = MakeEntry(1);
  odd.metadata = {{"neg", -7},
                  {"big", uint64_t{18446744073709551615u}},
                  {"nul", nullptr},
                  {"t", true},
                  {"arr", {1, "two", 3.5, nlohmann::json::array(), nlohmann::json::object()}}};
  odd.report = {{"scores", {{"a", 0.1}, {"b", 1e-7}, {"c", -0.0}, {"d", std::nan("")}, {"e", 1e300}}},
                {"reasons", {"quote \" and \\ and \x01 and \x7f", "bad \xc3 utf8", "é€😀"}},
                {"nested", {{"deep", {{"deeper", {false, nullptr, -1.5f}}}}}}};
  for (ReportView view : {ReportView::kFull, ReportView::kHidden}) {
    const std::vector<Entry> one = {odd};
    EXPECT_EQ(AddResponseJson(one, false, view), AddReference(one, false, view));
  }
  // The hidden view really drops the report (entry 4 has one).
  EXPECT_NE(AddResponseJson(std::vector<Entry>{entries[4]}, false, ReportView::kFull).find("\"report\""),
            std::string::npos);
  EXPECT_EQ(AddResponseJson(std::vector<Entry>{entries[4]}, false, ReportView::kHidden).find("\"report\""),
            std::string::npos);
}

}  // namespace
}  // namespace bulwark::server
