// Issue #15 point 1, end to end against a real `bulwark serve` on 127.0.0.1: the paginated list
// (keyset cursor on the time-ordered id), GET /v1/namespaces, client keys (upsert, get by key),
// Idempotency-Key on add, delete-all and forget, expiry (never returned, then purged by the
// sweeper), and tenant isolation on every new route.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "service_fixture.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using nlohmann::json;
using testing::Answer;
using testing::Send;
using testing::SendJson;
using testing::ServerProcess;

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class RoutesServiceTest : public testing::ServiceFixture {
 protected:
  void Start(std::vector<std::string> args = {}, const std::string& store = "store") {
    StartServer(std::move(args), store);
    ASSERT_FALSE(admin_.empty());
  }
  void SetUp() override { Start(); }
  std::string Add(const std::string& key, const json& body) {
    Answer a = Call("POST", "/v1/memories", key, body);
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json()["entry"].value("id", "");
  }
  std::vector<std::string> ListIds(const std::string& key, const std::string& query) {
    Answer a = Call("GET", "/v1/memories?" + query, key);
    EXPECT_EQ(a.status, 200) << a.body;
    std::vector<std::string> ids;
    const json a_body = a.json();
    for (const json& e : a_body["entries"]) ids.push_back(e["id"]);
    return ids;
  }
};

TEST_F(RoutesServiceTest, ListPagesFollowTheCursorOldestFirst) {
  std::vector<std::string> added;
  for (int i = 0; i < 7; ++i)
    added.push_back(Add(admin_, {{"namespace", "alice"}, {"text", "note " + std::to_string(i)}}));
  std::vector<std::string> listed;
  std::string cursor;
  int pages = 0;
  while (pages < 10) {
    Answer a = Call(
        "GET", "/v1/memories?namespace=alice&limit=3" + (cursor.empty() ? "" : "&cursor=" + cursor), admin_);
    ASSERT_EQ(a.status, 200) << a.body;
    ++pages;
    EXPECT_LE(a.json()["entries"].size(), 3u);
    const json a_body = a.json();
    for (const json& e : a_body["entries"]) listed.push_back(e["id"]);
    if (a.json()["next_cursor"].is_null()) break;
    cursor = a.json()["next_cursor"];
  }
  EXPECT_EQ(listed, added);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(Call("GET", "/v1/memories?namespace=alice&cursor=nope", admin_).status, 400);
  EXPECT_EQ(Call("GET", "/v1/memories?namespace=alice&limit=0", admin_).error_code(), "out_of_range");
  EXPECT_EQ(Call("GET", "/v1/memories?namespace=alice&colour=red", admin_).error_code(), "unknown_field");
  EXPECT_EQ(Call("GET", "/v1/memories?namespace=alice&filter=%7Bnot", admin_).error_code(), "invalid_json");
}

TEST_F(RoutesServiceTest, ListFiltersByStateAndMetadataAndQuarantinedNeedsAdmin) {
  const std::string writer = NewPrincipal("w", "writer", {"alice"});
  const std::string tea =
      Add(writer, {{"namespace", "alice"}, {"text", "likes tea"}, {"metadata", {{"c", "food"}}}});
  Add(writer, {{"namespace", "alice"}, {"text", "likes trains"}, {"metadata", {{"c", "travel"}}}});
  const std::string gone =
      Add(writer, {{"namespace", "alice"}, {"text", "likes coffee"}, {"metadata", {{"c", "food"}}}});
  ASSERT_EQ(Call("DELETE", "/v1/memories/" + gone + "?namespace=alice", writer).status, 200);
  EXPECT_THAT(ListIds(writer, "namespace=alice&filter=%7B%22c%22%3A%22food%22%7D"),
              ::testing::ElementsAre(tea));
  EXPECT_THAT(ListIds(writer, "namespace=alice&state=deleted"), ::testing::ElementsAre(gone));
  Answer q = Call("GET", "/v1/memories?namespace=alice&state=quarantined", writer);
  EXPECT_EQ(q.status, 403) << q.body;
  EXPECT_EQ(Call("GET", "/v1/memories?namespace=alice&state=quarantined", admin_).status, 200);
  EXPECT_EQ(Call("GET", "/v1/memories?namespace=alice&state=bogus", writer).status, 400);
}

TEST_F(RoutesServiceTest, UngrantedNamespacesAnswerLikeMissingOnesOnEveryNewRoute) {
  const std::string reader = NewPrincipal("r", "reader", {"alice"});
  const std::string scoped_admin = NewPrincipal("a", "admin", {"alice"});
  Add(admin_, {{"namespace", "alice"}, {"text", "alice memory"}});
  Add(admin_, {{"namespace", "alice"}, {"text", "alice memory two"}});
  Add(admin_, {{"namespace", "bob"}, {"text", "bob memory"}});
  for (const std::string& key : {reader, scoped_admin}) {
    Answer ungranted = Call("GET", "/v1/memories?namespace=bob", key);
    Answer missing = Call("GET", "/v1/memories?namespace=nobody", key);
    EXPECT_EQ(ungranted.status, 404);
    EXPECT_EQ(ungranted.body, missing.body);
    EXPECT_EQ(ungranted.error_code(), "namespace_not_found");
    EXPECT_EQ(Call("GET", "/v1/memories?namespace=bob&key=k", key).body, missing.body);
  }
  for (const char* route : {"delete-all", "forget"}) {
    Answer ungranted = Call("POST", "/v1/namespaces/bob/" + std::string(route), scoped_admin);
    Answer missing = Call("POST", "/v1/namespaces/nobody/" + std::string(route), scoped_admin);
    EXPECT_EQ(ungranted.status, 404) << ungranted.body;
    EXPECT_EQ(ungranted.body, missing.body);
    EXPECT_EQ(Call("POST", "/v1/namespaces/alice/" + std::string(route), reader).status, 403);
  }
  EXPECT_EQ(ListIds(admin_, "namespace=bob").size(), 1u) << "nothing in bob changed";

  Answer mine = Call("GET", "/v1/namespaces", reader);
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(
      mine.json()["namespaces"],
      (json::array(
          {{{"namespace", "alice"}, {"active", 2}, {"quarantined", 0}, {"deleted", 0}, {"purged", 0}}})));
  Answer all = Call("GET", "/v1/namespaces", admin_);
  ASSERT_EQ(all.status, 200) << all.body;
  ASSERT_EQ(all.json()["namespaces"].size(), 2u);
  EXPECT_EQ(all.json()["namespaces"][1]["namespace"], "bob");
}

TEST_F(RoutesServiceTest, AKeyUpsertsOneEntryPerNamespace) {
  const std::string writer = NewPrincipal("w", "writer", {"alice"});
  const std::string other = NewPrincipal("o", "writer", {"alice"});
  Answer first = Call("POST", "/v1/memories", writer,
                      {{"namespace", "alice"}, {"key", "seat"}, {"text", "window seat"}});
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string id = first.json()["entry"]["id"];
  EXPECT_EQ(first.json()["entry"]["metadata"]["bulwark.key"], "seat") << "the key is signed metadata";
  Answer second =
      Call("POST", "/v1/memories", writer, {{"namespace", "alice"}, {"key", "seat"}, {"text", "aisle seat"}});
  ASSERT_EQ(second.status, 200) << second.body;
  EXPECT_EQ(second.json()["entry"]["id"], id);
  EXPECT_EQ(second.json()["entry"]["text"], "aisle seat");
  Answer by_key = Call("GET", "/v1/memories?namespace=alice&key=seat", writer);
  ASSERT_EQ(by_key.status, 200);
  ASSERT_EQ(by_key.json()["entries"].size(), 1u);
  EXPECT_EQ(by_key.json()["entries"][0]["text"], "aisle seat");
  EXPECT_EQ(ListIds(writer, "namespace=alice").size(), 1u);
  // Another writer may not rewrite it through the key; the key is the namespace's.
  EXPECT_EQ(
      Call("POST", "/v1/memories", other, {{"namespace", "alice"}, {"key", "seat"}, {"text", "x"}}).status,
      403);
  // A PATCH keeps the key; clients cannot write reserved metadata themselves.
  ASSERT_EQ(
      Call("PATCH", "/v1/memories/" + id, writer, {{"namespace", "alice"}, {"metadata", {{"a", 1}}}}).status,
      200);
  EXPECT_EQ(ListIds(writer, "namespace=alice&key=seat"), std::vector<std::string>{id});
  EXPECT_EQ(Call("POST", "/v1/memories", writer,
                 {{"namespace", "alice"}, {"text", "t"}, {"metadata", {{"bulwark.key", "seat"}}}})
                .error_code(),
            "invalid_argument");
  EXPECT_EQ(Call("POST", "/v1/memories", writer, {{"namespace", "alice"}, {"key", ""}, {"text", "t"}}).status,
            400);
  Answer history = Call("GET", "/v1/memories/" + id + "/history?namespace=alice", writer);
  ASSERT_EQ(history.status, 200);
  EXPECT_EQ(history.json()["events"].size(), 3u) << "add, upsert update, patch";
}

TEST_F(RoutesServiceTest, ARetriedAddWithAnIdempotencyKeyStoresOnce) {
  const std::string writer = NewPrincipal("w", "writer", {"alice"});
  const json body = {{"namespace", "alice"}, {"text", "book the 9:40 train"}};
  Answer first = Call("POST", "/v1/memories", writer, body, {{"Idempotency-Key", "req-1"}});
  ASSERT_EQ(first.status, 201) << first.body;
  Answer retry = Call("POST", "/v1/memories", writer, body, {{"Idempotency-Key", "req-1"}});
  ASSERT_EQ(retry.status, 201) << retry.body;
  EXPECT_EQ(retry.json()["entry"]["id"], first.json()["entry"]["id"]);
  EXPECT_EQ(ListIds(writer, "namespace=alice").size(), 1u);
  Answer changed = Call("POST", "/v1/memories", writer, {{"namespace", "alice"}, {"text", "other"}},
                        {{"Idempotency-Key", "req-1"}});
  EXPECT_EQ(changed.status, 409) << changed.body;
  Answer batch = Call("POST", "/v1/memories", writer,
                      {{"namespace", "alice"}, {"entries", {{{"text", "a"}}, {{"text", "b"}}}}},
                      {{"Idempotency-Key", "req-2"}});
  ASSERT_EQ(batch.status, 201);
  Answer batch_retry = Call("POST", "/v1/memories", writer,
                            {{"namespace", "alice"}, {"entries", {{{"text", "a"}}, {{"text", "b"}}}}},
                            {{"Idempotency-Key", "req-2"}});
  ASSERT_EQ(batch_retry.status, 201);
  EXPECT_EQ(batch_retry.json()["entries"].size(), 2u);
  EXPECT_EQ(batch_retry.json()["entries"][1]["id"], batch.json()["entries"][1]["id"]);
  EXPECT_EQ(ListIds(writer, "namespace=alice").size(), 3u);
  EXPECT_EQ(Call("POST", "/v1/memories", writer, body, {{"Idempotency-Key", "has space"}}).status, 400);
}

TEST_F(RoutesServiceTest, DeleteAllAndForgetAreAdminOnlyAndAudited) {
  const std::string a =
      Add(admin_, {{"namespace", "alice"}, {"text", "one"}, {"metadata", {{"user_id", "u1"}}}});
  const std::string b =
      Add(admin_, {{"namespace", "alice"}, {"text", "two"}, {"metadata", {{"user_id", "u2"}}}});
  Answer forgot = Call("POST", "/v1/namespaces/alice/forget", admin_, {{"filter", {{"user_id", "u1"}}}});
  ASSERT_EQ(forgot.status, 200) << forgot.body;
  EXPECT_EQ(forgot.json()["purged"], 1);
  EXPECT_EQ(forgot.json()["ids"], json::array({a}));
  Answer purged = Call("GET", "/v1/memories/" + a + "?namespace=alice", admin_);
  EXPECT_EQ(purged.json()["entry"]["state"], "purged");
  EXPECT_EQ(purged.json()["entry"]["text"], "");
  Answer deleted = Call("POST", "/v1/namespaces/alice/delete-all", admin_);
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.json()["deleted"], 1);
  EXPECT_EQ(deleted.json()["more"], false);
  EXPECT_TRUE(ListIds(admin_, "namespace=alice").empty());
  EXPECT_EQ(ListIds(admin_, "namespace=alice&state=deleted"), std::vector<std::string>{b});
  EXPECT_EQ(Call("POST", "/v1/namespaces/alice/delete-all", admin_, {{"colour", 1}}).error_code(),
            "unknown_field");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // audit group commit
  Answer audit = Call("GET", "/v1/audit?namespace=alice&limit=50", admin_);
  ASSERT_EQ(audit.status, 200);
  std::set<std::string> operations;
  const json audit_body = audit.json();
  for (const json& r : audit_body["records"]) operations.insert(r["operation"]);
  EXPECT_TRUE(operations.contains("forget"));
  EXPECT_TRUE(operations.contains("delete_all"));
  EXPECT_TRUE(operations.contains("list"));
}

TEST_F(RoutesServiceTest, AnExpiredEntryIsNeverReturnedEvenBeforeTheSweeperRuns) {
  // The fixture's server sweeps every 60 s (the default): the first sweep comes after this test.
  const int64_t expires = NowUs() + 1'500'000;
  const std::string id =
      Add(admin_, {{"namespace", "alice"}, {"text", "the gate code is 4711"}, {"expires_at_us", expires}});
  Add(admin_, {{"namespace", "alice"}, {"text", "the gate is green"}});
  EXPECT_EQ(Call("GET", "/v1/memories/" + id + "?namespace=alice", admin_).status, 200);
  EXPECT_EQ(Call("POST", "/v1/memories", admin_,
                 {{"namespace", "alice"}, {"text", "x"}, {"expires_at_us", NowUs() - 1}})
                .status,
            400)
      << "an expiry in the past";
  while (NowUs() < expires + 50'000) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(Call("GET", "/v1/memories/" + id + "?namespace=alice", admin_).status, 404);
  EXPECT_EQ(Call("GET", "/v1/memories/" + id + "/history?namespace=alice", admin_).status, 404);
  Answer search =
      Call("POST", "/v1/memories/search", admin_, {{"namespace", "alice"}, {"query", "gate code"}, {"k", 5}});
  ASSERT_EQ(search.status, 200);
  const json search_body = search.json();
  EXPECT_EQ(search_body["hits"].size(), 1u);
  for (const json& hit : search_body["hits"]) EXPECT_NE(hit["id"], id);
  EXPECT_EQ(ListIds(admin_, "namespace=alice").size(), 1u);
  EXPECT_TRUE(ListIds(admin_, "namespace=alice&state=purged").empty()) << "not swept yet";
}

TEST_F(RoutesServiceTest, TheSweeperPurgesExpiredEntries) {
  server_.reset();
  Start({"--expiry-sweep-ms", "100"}, "store-sweep");
  const std::string id =
      Add(admin_,
          {{"namespace", "alice"}, {"text", "the gate code is 4711"}, {"expires_at_us", NowUs() + 300'000}});
  std::vector<std::string> purged;
  for (int i = 0; i < 100 && purged.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    purged = ListIds(admin_, "namespace=alice&state=purged");
  }
  EXPECT_EQ(purged, std::vector<std::string>{id});
  Answer shell = Call("GET", "/v1/memories/" + id + "?namespace=alice", admin_);
  ASSERT_EQ(shell.status, 200) << "a purged entry shows its state, without text";
  EXPECT_EQ(shell.json()["entry"]["text"], "");
  Answer history = Call("GET", "/v1/memories/" + id + "/history?namespace=alice", admin_);
  ASSERT_EQ(history.status, 200);
  const json events = history.json()["events"];
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1]["event"], "purge");
  EXPECT_EQ(events[1]["actor"], "bulwark:expiry");
  EXPECT_EQ(events[0]["detail"], (json{{"purged", true}})) << "the text is gone from the history too";
}

}  // namespace
}  // namespace bulwark
