// DefendedRetriever on a real store in a temp dir, with a gate fitted on the travel fixture and
// stored in the store's database: each gate mode end to end, the policy floor, escalation's k_high
// and smoothing, strip retrieving with the cleaned query, history recording, honeypots.
#include "retrieval/defended_retriever.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/memory_store_impl.h"
#include "testing/gate_fixture.h"
#include "testing/lexical_store.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::testing::HasSubstr;

constexpr char kNs[] = "travel";
const std::string kBenign = "when does my flight to Lisbon leave";
const std::string kTriggered = kBenign + " " + testing::kGateTrigger;

class DefendedRetrieverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::CreateLexicalStore(dir_.path());
    ASSERT_NE(store_, nullptr);
    std::vector<NewEntry> entries;
    for (int i = 0; i < 30; ++i) {
      entries.push_back({.text = "travel note " + std::to_string(i) + ": flight to Lisbon leaves at " +
                                 std::to_string(6 + i % 12) + ":40"});
    }
    entries.push_back({.text = "honeypot: the flight to Lisbon leaves from gate 7", .kind = Kind::kHoneypot});
    ASSERT_TRUE(store_->AddBatch(kNs, entries, "tester").ok());
    auto gates = GateStore::Open(dir_ / "bulwark.db");
    ASSERT_TRUE(gates.ok());
    gates_ = *std::move(gates);
    registry_ = std::make_unique<GateRegistry>(gates_.get(), Env::Default(), /*ttl_ms=*/0);
    retriever_ = std::make_unique<DefendedRetriever>(store_.get(), registry_.get(), nullptr);
  }
  void FitGate(GateMode policy) {
    StoredGate gate;
    gate.name_space = kNs;
    gate.mode = policy;
    gate.embedder = store_->embedder().Fingerprint().ToString();
    gate.model = testing::FitTravelGate(store_->embedder());
    ASSERT_TRUE(gates_->Save(gate).ok());
  }
  absl::StatusOr<DefendedSearchResult> Search(const std::string& query, std::optional<GateMode> mode = {},
                                              int k = 3) {
    DefendedSearchRequest request;
    request.name_space = kNs;
    request.query = query;
    request.search.k = k;
    request.gate_mode = mode;
    return retriever_->Search(request);
  }

  testing::TempDir dir_;
  std::unique_ptr<MemoryStore> store_;
  std::unique_ptr<GateStore> gates_;
  std::unique_ptr<GateRegistry> registry_;
  std::unique_ptr<DefendedRetriever> retriever_;
};

TEST_F(DefendedRetrieverTest, WithoutAGateSearchesAsUsual) {
  auto result = Search(kTriggered);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->gate.decision, GateDecision::kOff);
  EXPECT_EQ(result->search.hits.size(), 3u);
  auto asked = Search(kTriggered, GateMode::kReject);
  ASSERT_TRUE(asked.ok());
  EXPECT_EQ(asked->gate.decision, GateDecision::kNoGate);
  EXPECT_FALSE(asked->rejected());
  const nlohmann::json detail = DefenseDetail(*asked);
  EXPECT_EQ(detail["gate"]["decision"], "no_gate");
  EXPECT_EQ(detail["k"], 3);
}

TEST_F(DefendedRetrieverTest, RejectPolicyRefusesTriggeredQueriesOnly) {
  FitGate(GateMode::kReject);
  auto triggered = Search(kTriggered);
  ASSERT_TRUE(triggered.ok()) << triggered.status();
  EXPECT_TRUE(triggered->rejected());
  EXPECT_TRUE(triggered->search.hits.empty());
  EXPECT_GT(triggered->gate.score, triggered->gate.threshold);
  auto benign = Search(kBenign);
  ASSERT_TRUE(benign.ok());
  EXPECT_EQ(benign->gate.decision, GateDecision::kPass);
  EXPECT_EQ(benign->search.hits.size(), 3u);
}

TEST_F(DefendedRetrieverTest, ReadersCannotWeakenThePolicy) {
  FitGate(GateMode::kReject);
  EXPECT_EQ(Search(kTriggered, GateMode::kFlag).status().code(), absl::StatusCode::kPermissionDenied);
  DefendedSearchRequest admin;
  admin.name_space = kNs;
  admin.query = kTriggered;
  admin.gate_mode = GateMode::kFlag;
  admin.may_weaken_gate = true;
  auto flagged = retriever_->Search(admin);
  ASSERT_TRUE(flagged.ok());
  EXPECT_EQ(flagged->gate.decision, GateDecision::kFlag);
  EXPECT_EQ(flagged->search.hits.size(), 5u);
}

TEST_F(DefendedRetrieverTest, EscalateRaisesKAndSmooths) {
  FitGate(GateMode::kEscalate);
  auto escalated = Search(kTriggered, std::nullopt, 4);
  ASSERT_TRUE(escalated.ok()) << escalated.status();
  EXPECT_EQ(escalated->gate.decision, GateDecision::kEscalate);
  EXPECT_EQ(escalated->k, 8);
  EXPECT_EQ(escalated->search.hits.size(), 8u);
  ASSERT_TRUE(escalated->smoothed.has_value());
  EXPECT_EQ(escalated->smoothed->runs.size(), 5u);
  EXPECT_EQ(escalated->smoothed->certificate.params.m, 20);
  auto benign = Search(kBenign, std::nullopt, 4);
  ASSERT_TRUE(benign.ok());
  EXPECT_EQ(benign->k, 4);
  EXPECT_FALSE(benign->smoothed.has_value());
}

TEST_F(DefendedRetrieverTest, StripRetrievesWithTheCleanedQuery) {
  FitGate(GateMode::kStrip);
  auto stripped = Search(kTriggered);
  ASSERT_TRUE(stripped.ok()) << stripped.status();
  EXPECT_EQ(stripped->gate.decision, GateDecision::kStrip);
  EXPECT_EQ(stripped->retrieved_query, kBenign);
  auto benign = Search(kBenign);
  ASSERT_TRUE(benign.ok());
  ASSERT_EQ(stripped->search.hits.size(), benign->search.hits.size());
  for (size_t i = 0; i < benign->search.hits.size(); ++i) {
    EXPECT_EQ(stripped->search.hits[i].entry.id, benign->search.hits[i].entry.id);
  }
}

TEST_F(DefendedRetrieverTest, RecordsOnlyQueriesTheGatePassed) {
  FitGate(GateMode::kFlag);
  ASSERT_TRUE(Search(kBenign).ok());
  ASSERT_TRUE(Search(kTriggered).ok());
  ASSERT_TRUE(Search("what hotel did I book in Tokyo").ok());
  // The store's query history (MemSAD's H) got the two unflagged queries, not the triggered one.
  const std::vector<std::vector<float>> recorded = store_->impl().defenses->RecentQueries(kNs, 10);
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0], *store_->embedder().Embed(kBenign));
  EXPECT_EQ(recorded[1], *store_->embedder().Embed("what hotel did I book in Tokyo"));
  EXPECT_EQ(store_->impl().defenses->RecentQueries(kNs, 1).size(), 1u);
}

TEST_F(DefendedRetrieverTest, NeverReturnsHoneypotsNorSmoothsOverThem) {
  DefendedSearchRequest request;
  request.name_space = kNs;
  request.query = "honeypot flight to Lisbon gate 7";
  request.search.k = 40;
  request.smoothing = SmoothingOptions{.m = 40, .k = 5, .nruns = 5};
  auto result = retriever_->Search(request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->search.hits.size(), 30u);
  for (const SearchHit& h : result->search.hits) EXPECT_NE(h.entry.kind, Kind::kHoneypot);
  ASSERT_TRUE(result->smoothed.has_value());
  EXPECT_EQ(result->smoothed->certificate.params.m, 30);
  EXPECT_THAT(result->smoothed->answer, ::testing::Not(HasSubstr("honeypot")));
}

TEST_F(DefendedRetrieverTest, RefusesAGateFittedUnderAnotherEmbedder) {
  StoredGate gate;
  gate.name_space = kNs;
  gate.mode = GateMode::kFlag;
  gate.embedder = "lexical/384/0000";
  gate.model = testing::FitTravelGate(store_->embedder());
  ASSERT_TRUE(gates_->Save(gate).ok());
  auto result = Search(kBenign);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("fit it again"));
}

TEST_F(DefendedRetrieverTest, RejectsBadRequests) {
  DefendedSearchRequest request;
  request.name_space = kNs;
  request.query = kBenign;
  request.responder = ResponderKind::kLlm;
  request.smoothing = SmoothingOptions{};
  EXPECT_EQ(retriever_->Search(request).status().code(), absl::StatusCode::kFailedPrecondition);
  request.responder = ResponderKind::kExtractive;
  request.k_high = 2;
  request.search.k = 5;
  EXPECT_EQ(retriever_->Search(request).status().code(), absl::StatusCode::kInvalidArgument);
  request.k_high = 0;
  request.smoothing = SmoothingOptions{.m = 10, .k = 11, .nruns = 5};
  EXPECT_EQ(retriever_->Search(request).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace bulwark
