// The internal query-history route (query_history_forwarding.h, query_history_batch.h): only a
// batch sealed under the group's key, fresh, well formed, of the store's dimension and finite, is
// appended, and only for the namespaces this replica leads; anything refused appends nothing.
#include "server/query_history_forwarding.h"

#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "testing/counting_env.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::server {
namespace {

using ::bulwark::testing::StatusIs;

constexpr size_t kDim = 4;

class QueryHistoryRouteTest : public ::testing::Test {
 protected:
  QueryHistoryRouteTest()
      : receiver_(
            key_, kDim, [](std::string_view ns) { return ns == "led"; },
            [this](std::string_view ns, std::span<const float> e) {
              appended_.emplace_back(std::string(ns), std::vector<float>(e.begin(), e.end()));
            },
            &env_) {}
  // A batch of `queries` sent now, with a fresh nonce.
  QueryBatch Batch(std::vector<ForwardedQuery> queries) {
    QueryBatch batch;
    batch.from = "r2/00";
    batch.sent_us = env_.NowMicros();
    batch.nonce = absl::StrCat(std::string(16, '0'), absl::Hex(++nonces_, absl::kZeroPad16));
    batch.queries = std::move(queries);
    return batch;
  }
  Reply Send(const QueryBatch& batch, const HmacKey& key) {
    absl::StatusOr<SealedBatch> sealed = SealQueryBatch(batch, key);
    EXPECT_TRUE(sealed.ok()) << sealed.status();
    return Send(sealed->body, sealed->mac);
  }
  Reply Send(const std::string& body, const std::string& mac) {
    httplib::Request request;
    request.body = body;
    request.headers.emplace(kReplicaMacHeader, mac);
    return receiver_.Handle(request);
  }

  static HmacKey Filled(uint8_t byte) {
    HmacKey key;
    key.fill(byte);
    return key;
  }

  HmacKey key_ = Filled(7);  // before receiver_, which copies it
  ::bulwark::testing::CountingEnv env_;
  std::vector<std::pair<std::string, std::vector<float>>> appended_;
  QueryHistoryReceiver receiver_;
  uint64_t nonces_ = 0;
};

TEST_F(QueryHistoryRouteTest, AppendsASealedBatchInOrderForTheNamespacesItLeads) {
  const Reply reply =
      Send(Batch({{"led", {1, 0, 0, 0}}, {"other", {0, 1, 0, 0}}, {"led", {0, 0, 1, 0}}}), key_);
  ASSERT_EQ(reply.status, 200) << reply.body.dump();
  EXPECT_EQ(reply.body["appended"], 2);
  EXPECT_EQ(reply.body["not_leader"], nlohmann::json::array({"other"}));
  ASSERT_EQ(appended_.size(), 2u);
  EXPECT_EQ(appended_[0].second, (std::vector<float>{1, 0, 0, 0}));
  EXPECT_EQ(appended_[1].second, (std::vector<float>{0, 0, 1, 0}));
  EXPECT_EQ(receiver_.received(), 2u);
  EXPECT_EQ(receiver_.Route().access, Access::kPublic);  // the MAC, not an API key, admits it
  EXPECT_FALSE(receiver_.Route().json_body);
}

TEST_F(QueryHistoryRouteTest, RefusesWhatIsNotSealedFreshValidAndLed) {
  const std::vector<float> ok = {1, 0, 0, 0};
  const HmacKey other_key = Filled(8);
  // Another key (an API caller has none of the group's), a changed body, no MAC.
  EXPECT_EQ(Send(Batch({{"led", ok}}), other_key).status, 401);
  absl::StatusOr<SealedBatch> sealed = SealQueryBatch(Batch({{"led", ok}}), key_);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  std::string changed = sealed->body;
  changed.replace(changed.find("led"), 3, "lex");
  EXPECT_EQ(Send(changed, sealed->mac).status, 401);
  EXPECT_EQ(Send(sealed->body, "").status, 401);
  // A replay of a batch accepted once; a batch sent too long ago.
  EXPECT_EQ(Send(sealed->body, sealed->mac).status, 200);
  EXPECT_EQ(Send(sealed->body, sealed->mac).status, 401);
  QueryBatch stale = Batch({{"led", ok}});
  stale.sent_us -= kMaxBatchSkewUs + 1'000'000;
  EXPECT_EQ(Send(stale, key_).status, 401);
  const size_t after_first = appended_.size();
  ASSERT_EQ(after_first, 1u);
  // Sealed but invalid: another dimension, NaN, infinity, a bad namespace, too many queries.
  EXPECT_EQ(Send(Batch({{"led", ok}, {"led", {1, 0, 0}}}), key_).status, 400);
  EXPECT_EQ(Send(Batch({{"led", {1, 0, 0, 0, 0}}}), key_).status, 400);
  EXPECT_EQ(Send(Batch({{"led", ok}, {"led", {std::nanf(""), 0, 0, 0}}}), key_).status, 400);
  EXPECT_EQ(Send(Batch({{"led", {std::numeric_limits<float>::infinity(), 0, 0, 0}}}), key_).status, 400);
  EXPECT_EQ(Send(Batch({{"", ok}}), key_).status, 400);
  EXPECT_EQ(Send(Batch(std::vector<ForwardedQuery>(kMaxQueriesPerBatch + 1, {"led", ok})), key_).status, 400);
  // A namespace this replica does not lead: answered, named, not appended.
  const Reply away = Send(Batch({{"other", ok}}), key_);
  EXPECT_EQ(away.status, 200);
  EXPECT_EQ(away.body["not_leader"], nlohmann::json::array({"other"}));
  EXPECT_EQ(appended_.size(), after_first) << "nothing of a refused batch is appended";
  EXPECT_EQ(receiver_.refused(), 11u);
}

TEST(QueryBatchTest, OpeningChecksTheMacBeforeParsingAndTheKeyComesFromKeyOne) {
  HmacKey key{};
  EXPECT_THAT(OpenQueryBatch("not a batch", std::string(64, '0'), key, 0, kDim),
              StatusIs(absl::StatusCode::kUnauthenticated));
  ::bulwark::testing::TempDir dir;
  ::bulwark::testing::CountingEnv env;
  absl::StatusOr<Keyring> keyring = Keyring::Create(dir.path() / "keyring.json", &env);
  ASSERT_TRUE(keyring.ok()) << keyring.status();
  absl::StatusOr<HmacKey> before = QueryBatchKey(*keyring);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(keyring->Rotate(&env).ok());
  absl::StatusOr<HmacKey> after = QueryBatchKey(*keyring);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*before, *after) << "a signing-key rotation does not change the batches' key";
  EXPECT_NE(*before, *keyring->Find(1)) << "derived, not the signing key itself";
  EXPECT_THAT(QueryBatchKey(Keyring()), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace bulwark::server
