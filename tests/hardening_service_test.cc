// Issue #18 hardening, end to end against a real `bulwark serve` on 127.0.0.1: provenance cannot
// be borrowed by an update (point 4), readers and writers get no detector oracle (point 7),
// privileged actions and refusals are audited with key ids and the service fails closed when the
// audit log cannot write (point 8), and the JSON content type, --insecure-dev's Origin/Host check,
// private store files and service-admin-only metrics (point 9).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <map>
#include <thread>

#include "service_fixture.h"
#include "testing/exec_sql.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using nlohmann::json;
using testing::Answer;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Send;
using testing::SendJson;
using testing::ServerProcess;

class HardeningServiceTest : public testing::ServiceFixture {
 protected:
  void SetUp() override {
    StartServer();
    ASSERT_FALSE(admin_.empty());
  }
  json AddEntry(const std::string& key, const std::string& ns, const std::string& text,
                const std::string& source) {
    Answer a = Call("POST", "/v1/memories", key, {{"namespace", ns}, {"text", text}, {"source", source}});
    EXPECT_EQ(a.status, 201) << a.body;
    return a.json()["entry"];
  }
  // Audit records (newest first) as a service admin sees them.
  json AuditRecords(const std::string& query = "") {
    Answer a = Call("GET", "/v1/audit?limit=1000" + query, admin_);
    EXPECT_EQ(a.status, 200) << a.body;
    return a.json()["records"];
  }
};

std::string KeyIdOfKey(const std::string& key) { return key.substr(4, key.find('_', 4) - 4); }

// Point 4: every role against every other role's entries. An update succeeds only for an admin
// or the entry's own principal (and never a non-admin on a "system" entry); the entry then names
// the updater, and the signed history keeps the author before.
TEST_F(HardeningServiceTest, ProvenanceCannotBeBorrowed) {
  const std::map<std::string, std::string> keys = {
      {"admin", admin_},
      {"ops", NewPrincipal("ops", "admin", {"a"})},
      {"w1", NewPrincipal("w1", "writer", {"a"})},
      {"w2", NewPrincipal("w2", "writer", {"a"})},
      {"r", NewPrincipal("r", "reader", {"a"})},
  };
  struct Creator {
    std::string principal;
    std::string source;
  };
  const std::vector<Creator> creators = {
      {"admin", "system"}, {"admin", "user"}, {"ops", "system"}, {"w1", "user"}, {"w2", "agent"}};
  int step = 0;
  for (const Creator& creator : creators) {
    for (const auto& [updater, key] : keys) {
      SCOPED_TRACE(creator.principal + "/" + creator.source + " entry patched by " + updater);
      const json entry = AddEntry(keys.at(creator.principal), "a",
                                  "the team meeting is in room " + std::to_string(++step), creator.source);
      const std::string id = entry["id"];
      const bool allowed = updater == "admin" || updater == "ops" ||
                           (updater == creator.principal && creator.source != "system");
      Answer patched = Call("PATCH", "/v1/memories/" + id, key,
                            {{"namespace", "a"}, {"text", "the team meeting moved to room 99"}});
      Answer got = Call("GET", "/v1/memories/" + id + "?namespace=a", admin_);
      ASSERT_EQ(got.status, 200) << got.body;
      if (!allowed) {
        EXPECT_EQ(patched.status, 403) << patched.body;
        EXPECT_EQ(patched.error_code(), "forbidden");
        EXPECT_EQ(got.json()["entry"]["text"], entry["text"]) << "a refused update changes nothing";
        EXPECT_EQ(got.json()["entry"]["principal"], creator.principal);
        continue;
      }
      ASSERT_EQ(patched.status, 200) << patched.body;
      EXPECT_EQ(patched.json()["entry"]["principal"], updater) << "the entry shows who last wrote it";
      EXPECT_EQ(got.json()["entry"]["principal"], updater);
      EXPECT_EQ(got.json()["entry"]["source"], creator.source);
      Answer history = Call("GET", "/v1/memories/" + id + "/history?namespace=a", admin_);
      ASSERT_EQ(history.status, 200) << history.body;
      const json events = history.json()["events"];
      ASSERT_EQ(events.size(), 2u) << history.body;
      EXPECT_EQ(events[0]["actor"], creator.principal);
      EXPECT_EQ(events[1]["actor"], updater);
      EXPECT_EQ(events[1]["verified"], true);
      if (updater != creator.principal) {
        EXPECT_EQ(events[1]["detail"]["previous_principal"], creator.principal) << history.body;
      }
    }
  }
  Answer verify = Call("POST", "/v1/admin/verify", admin_);
  ASSERT_EQ(verify.status, 200) << verify.body;
  EXPECT_EQ(verify.json()["ok"], true) << "re-signed entries and their histories verify";
}

// Point 4 for deletion: deleting is changing the entry, so the same rule holds — another writer
// cannot delete a writer's memory (and so cannot make room for its own version of it).
TEST_F(HardeningServiceTest, OnlyTheLastWriterOrAnAdminMayDelete) {
  const std::string w1 = NewPrincipal("w1", "writer", {"a"});
  const std::string w2 = NewPrincipal("w2", "writer", {"a"});
  const std::string first = AddEntry(w1, "a", "the spare key is under the blue pot", "user")["id"];
  const std::string second = AddEntry(w1, "a", "the gate code is 4411", "user")["id"];
  Answer refused = Call("DELETE", "/v1/memories/" + first + "?namespace=a", w2);
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(Call("GET", "/v1/memories/" + first + "?namespace=a", admin_).json()["entry"]["state"], "active");
  EXPECT_EQ(Call("DELETE", "/v1/memories/" + first + "?namespace=a", w1).status, 200);
  EXPECT_EQ(Call("DELETE", "/v1/memories/" + second + "?namespace=a", admin_).status, 200);
  EXPECT_EQ(Call("GET", "/v1/memories/" + second + "?namespace=a", admin_).json()["entry"]["state"],
            "deleted");
}

// Point 7: the add answer, GET, search hits and PATCH answer carry no detector report for readers
// and writers; admins still see it.
TEST_F(HardeningServiceTest, ReadersAndWritersGetNoDetectorOracle) {
  const std::string writer = NewPrincipal("w", "writer", {"a"});
  const std::string reader = NewPrincipal("r", "reader", {"a"});
  Answer added = Call("POST", "/v1/memories", writer, {{"namespace", "a"}, {"text", "Dana likes green tea"}});
  ASSERT_EQ(added.status, 201) << added.body;
  const std::string id = added.json()["entry"]["id"];
  EXPECT_FALSE(added.json()["entry"].contains("report")) << added.body;
  EXPECT_EQ(added.json()["entry"]["state"], "active") << "the decision is the state";
  Answer batch = Call("POST", "/v1/memories", writer,
                      {{"namespace", "a"}, {"entries", {{{"text", "one"}}, {{"text", "two"}}}}});
  ASSERT_EQ(batch.status, 201) << batch.body;
  EXPECT_THAT(batch.body, Not(HasSubstr("\"report\"")));

  for (const std::string& key : {writer, reader}) {
    Answer got = Call("GET", "/v1/memories/" + id + "?namespace=a", key);
    ASSERT_EQ(got.status, 200) << got.body;
    EXPECT_FALSE(got.json()["entry"].contains("report")) << got.body;
    Answer search = Call("POST", "/v1/memories/search", key, {{"namespace", "a"}, {"query", "green tea"}});
    ASSERT_EQ(search.status, 200) << search.body;
    ASSERT_FALSE(search.json()["hits"].empty());
    EXPECT_THAT(search.body, Not(HasSubstr("\"report\""))) << search.body;
  }
  Answer patched =
      Call("PATCH", "/v1/memories/" + id, writer, {{"namespace", "a"}, {"text", "Dana likes black tea"}});
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_FALSE(patched.json()["entry"].contains("report")) << patched.body;

  Answer as_admin = Call("GET", "/v1/memories/" + id + "?namespace=a", admin_);
  ASSERT_EQ(as_admin.status, 200) << as_admin.body;
  EXPECT_TRUE(as_admin.json()["entry"]["report"].contains("gate"))
      << "the report is for admins: " << as_admin.body;
}

// Point 8: privileged actions and refusals leave audit records naming the key id.
TEST_F(HardeningServiceTest, PrivilegedActionsAndRefusalsAreAuditedWithKeyIds) {
  const std::string admin_key_id = KeyIdOfKey(admin_);
  Answer created = Call("POST", "/v1/admin/principals", admin_,
                        {{"name", "w"}, {"role", "writer"}, {"namespaces", {"a"}}});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string writer = created.json()["api_key"];
  Answer second = Call("POST", "/v1/admin/principals/w/keys", admin_);
  ASSERT_EQ(second.status, 201) << second.body;
  const std::string second_id = second.json()["key_id"];
  ASSERT_EQ(Call("POST", "/v1/admin/keys/" + second_id + "/revoke", admin_).status, 200);
  ASSERT_EQ(Call("POST", "/v1/admin/signing-keys/rotate", admin_).status, 200);

  const std::string q1 = AddEntry(writer, "a", "first memory to review", "user")["id"];
  const std::string q2 = AddEntry(writer, "a", "second memory to review", "user")["id"];
  for (const std::string& id : {q1, q2}) {
    ASSERT_EQ(Call("POST", "/v1/memories/" + id + "/quarantine", admin_, {{"namespace", "a"}}).status, 200);
  }
  ASSERT_EQ(Call("POST", "/v1/quarantine/" + q1 + "/release", admin_, {{"namespace", "a"}}).status, 200);
  ASSERT_EQ(Call("POST", "/v1/quarantine/" + q2 + "/reject", admin_, {{"namespace", "a"}}).status, 200);
  ASSERT_EQ(Call("POST", "/v1/memories/" + q1 + "/purge", admin_, {{"namespace", "a"}}).status, 200);

  // Refusals: a bad key (401), a writer on an admin route (403).
  EXPECT_EQ(Call("GET", "/v1/admin/principals", "bwk_0123456789abcdef_wrongsecret").status, 401);
  EXPECT_EQ(Call("GET", "/v1/admin/principals", writer).status, 403);
  ASSERT_EQ(Call("POST", "/v1/admin/principals/w/revoke", admin_).status, 200);
  ASSERT_EQ(Call("POST", "/v1/admin/verify", admin_).status, 200);

  const json records = AuditRecords();
  std::map<std::string, std::vector<json>> by_operation;
  for (const json& r : records) by_operation[r["operation"]].push_back(r);
  for (const char* op : {"create_principal", "create_key", "revoke_key", "rotate_signing_key", "quarantine",
                         "release", "reject", "purge", "revoke_principal", "verify"}) {
    ASSERT_EQ(by_operation[op].size(), std::string_view(op) == "quarantine" ? 2u : 1u) << op;
    const json& r = by_operation[op][0];
    EXPECT_EQ(r["principal"], "admin") << op;
    EXPECT_EQ(r["detail"]["key_id"], admin_key_id) << op << ": " << r.dump();
  }
  EXPECT_EQ(by_operation["create_key"][0]["detail"]["created_key_id"], second_id);
  EXPECT_EQ(by_operation["revoke_key"][0]["detail"]["revoked_key_id"], second_id);
  EXPECT_EQ(by_operation["revoke_principal"][0]["detail"]["name"], "w");
  EXPECT_EQ(by_operation["add"].size(), 2u);
  EXPECT_EQ(by_operation["add"][0]["detail"]["key_id"], KeyIdOfKey(writer))
      << "ordinary writes name the key too";

  ASSERT_EQ(by_operation["refused"].size(), 2u) << records.dump();
  const json& forbidden = by_operation["refused"][0];  // newest first
  EXPECT_EQ(forbidden["principal"], "w");
  EXPECT_EQ(forbidden["detail"]["key_id"], KeyIdOfKey(writer));
  EXPECT_EQ(forbidden["detail"]["status"], 403);
  EXPECT_EQ(forbidden["detail"]["route"], "/v1/admin/principals");
  const json& unauthenticated = by_operation["refused"][1];
  EXPECT_EQ(unauthenticated["principal"], "");
  EXPECT_EQ(unauthenticated["detail"]["key_id"], "0123456789abcdef") << "the key id presented";
  EXPECT_EQ(unauthenticated["detail"]["status"], 401);

  Answer verify = Call("POST", "/v1/admin/verify", admin_);
  ASSERT_EQ(verify.status, 200) << verify.body;
  EXPECT_EQ(verify.json()["audit"]["ok"], true) << verify.body;
}

// A flood of bad keys from one address cannot fill the audit log: beyond the per-address bucket
// (burst 50, 5/s) a 401 is still answered but only counted; a good key from the same address is
// served as before.
TEST_F(HardeningServiceTest, AFloodOfBadKeysIsAnsweredButAuditedOnlyUpToThePerAddressLimit) {
  constexpr int kBadRequests = 120;
  for (int i = 0; i < kBadRequests; ++i) {
    Answer a = Call("GET", "/v1/namespaces", "bwk_0123456789abcdef_notakey");
    ASSERT_EQ(a.status, 401) << a.body;
  }
  EXPECT_EQ(Call("GET", "/v1/namespaces", admin_).status, 200) << "a good key is not throttled";
  ASSERT_EQ(Call("POST", "/v1/admin/verify", admin_).status, 200);  // flushes the audit log
  Answer got = Call("GET", "/v1/audit?limit=1000", admin_);
  ASSERT_EQ(got.status, 200) << got.body;
  int refused = 0;
  const json records = got.json()["records"];
  for (const json& r : records) refused += r["operation"] == "refused" ? 1 : 0;
  EXPECT_GE(refused, 50) << "the burst is audited";
  EXPECT_LT(refused, kBadRequests) << "not every refusal of the flood is a record";
  Answer metrics = Call("GET", "/metrics", admin_);
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.body,
              HasSubstr("bulwark_refusals_unaudited_total " + std::to_string(kBadRequests - refused) + "\n"))
      << "every refusal is either a record or counted";
}

// Point 8: while the audit log cannot write (another process holds audit.db's write lock), requests
// are refused with 503 audit_unavailable; they are served again once it can.
TEST_F(HardeningServiceTest, AuditFailsClosedWhileItCannotWrite) {
  const std::string id = AddEntry(admin_, "a", "a memory read while the audit log is locked", "user")["id"];
  const std::string path = "/v1/memories/" + id + "?namespace=a";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "store" / "audit.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);

  // The first reads are queued; once the writer's attempt fails (its busy timeout is 5 s), reads stop.
  Answer refused;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    refused = Call("GET", path, admin_);
    if (refused.status != 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(refused.error_code(), "audit_unavailable");
  EXPECT_EQ(Call("POST", "/v1/memories/search", admin_, {{"namespace", "a"}, {"query", "memory"}}).status,
            503);
  EXPECT_EQ(Call("GET", "/healthz", "").status, 200) << "liveness is not an audited read";
  Answer metrics = Call("GET", "/metrics", admin_);
  EXPECT_THAT(metrics.body, HasSubstr("\nbulwark_audit_write_failing 1"));

  ASSERT_EQ(sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  Answer served;
  const auto recovery = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < recovery) {
    served = Call("GET", path, admin_);
    if (served.status == 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(served.status, 200) << served.body;
  // Nothing served was left unrecorded: the reads before the failure are in the log.
  int gets = 0;
  for (const json& r : AuditRecords()) gets += r["operation"] == "get";
  EXPECT_GE(gets, 2);
}

// Point 9: a body must be declared JSON; a refused one writes nothing.
// Point 6: access-control state is signed. One SQL statement that made a reader an admin, or an
// inserted API key row, used to work; now the key is refused and verify names the row.
TEST_F(HardeningServiceTest, AccessControlEditsAreRefusedAndReported) {
  const std::string reader = NewPrincipal("eve", "reader", {"notes"});
  ASSERT_EQ(Call("POST", "/v1/memories/search", reader, {{"namespace", "notes"}, {"query", "x"}}).status,
            200);
  EXPECT_EQ(Call("GET", "/v1/admin/principals", reader).status, 403);
  testing::ExecSql(dir_ / "store" / "bulwark.db",
                   "UPDATE principals SET role = 'admin', namespaces = '[\"*\"]' WHERE name = 'eve'");
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // past the credential cache
  const Answer escalated = Call("GET", "/v1/admin/principals", reader);
  EXPECT_EQ(escalated.status, 401) << escalated.body;
  const Answer verify = Call("POST", "/v1/admin/verify", admin_);
  ASSERT_EQ(verify.status, 200) << verify.body;
  EXPECT_EQ(verify.json()["ok"], false) << verify.body;
  EXPECT_THAT(verify.json()["access"]["problems"].dump(), HasSubstr("principal eve")) << verify.body;
}

// Issue #15 point 6: a caller's W3C traceparent is carried into the audit record of its request
// (and a malformed one is dropped, not copied).
TEST_F(HardeningServiceTest, TraceparentReachesTheAuditRecord) {
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  ASSERT_EQ(Call("POST", "/v1/memories/search", admin_, {{"namespace", "t"}, {"query", "x"}},
                 {{"traceparent", trace}})
                .status,
            200);
  ASSERT_EQ(Call("POST", "/v1/memories/search", admin_, {{"namespace", "t"}, {"query", "y"}},
                 {{"traceparent", "00-not-a-trace-<b>"}})
                .status,
            200);
  const json records = AuditRecords("&namespace=t");
  ASSERT_GE(records.size(), 2u) << records;
  EXPECT_EQ(records[1]["detail"]["traceparent"], trace) << records;  // newest first
  EXPECT_FALSE(records[0]["detail"].contains("traceparent")) << records;
}

TEST_F(HardeningServiceTest, JsonRoutesRequireTheJsonContentType) {
  httplib::Headers auth = {{"Authorization", "Bearer " + admin_}};
  const std::string body = json{{"namespace", "a"}, {"text", "sent as a form"}}.dump();
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded"}) {
    auto result = client_->Post("/v1/memories", auth, body, type);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 415) << type << ": " << result->body;
    EXPECT_THAT(result->body, HasSubstr("unsupported_media_type"));
  }
  Answer search = Call("POST", "/v1/memories/search", admin_, {{"namespace", "a"}, {"query", "form"}});
  ASSERT_EQ(search.status, 200) << search.body;
  EXPECT_TRUE(search.json()["hits"].empty()) << "a refused body writes nothing";
  auto ok = client_->Post("/v1/memories", auth, body, "application/json; charset=utf-8");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201) << ok->body;
}

// Point 9: every file and directory the server creates is private to its user.
TEST_F(HardeningServiceTest, StoreFilesArePrivate) {
  AddEntry(admin_, "a", "a memory that makes the server write", "user");
  ASSERT_EQ(Call("GET", "/v1/audit?limit=1", admin_).status, 200);  // flushes audit.db
  struct stat st {};
  ASSERT_EQ(stat((dir_ / "store").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_ / "store")) {
    ASSERT_EQ(stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0077, 0u) << e.path() << " has mode " << std::oct << (st.st_mode & 0777);
    ++files;
  }
  EXPECT_GE(files, 3) << "store database, audit.db, keyring";
}

// Point 9: /metrics is service-wide, so an admin scoped to some namespaces does not read it.
TEST_F(HardeningServiceTest, MetricsNeedTheServiceAdmin) {
  const std::string scoped = NewPrincipal("ops", "admin", {"a"});
  Answer refused = Call("GET", "/metrics", scoped);
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(Call("GET", "/metrics", admin_).status, 200);
}

// Issue #15 point 6: the write gate's latency and the search stages reach /metrics.
TEST_F(HardeningServiceTest, MetricsCarryWriteGateAndSearchStageLatency) {
  AddEntry(admin_, "m", "the boiler is serviced every October", "user");
  AddEntry(admin_, "m", "the recycling goes out on Tuesdays", "user");
  ASSERT_EQ(Call("POST", "/v1/memories/search", admin_, {{"namespace", "m"}, {"query", "boiler"}}).status,
            200);
  const Answer metrics = Call("GET", "/metrics", admin_);
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.body, HasSubstr("# TYPE bulwark_write_gate_seconds histogram\n"));
  EXPECT_THAT(metrics.body, HasSubstr("bulwark_write_gate_seconds_count 2\n"));
  for (const char* stage : {"embed", "gate", "index", "verify"}) {
    EXPECT_THAT(metrics.body,
                HasSubstr(std::string("bulwark_search_stage_seconds_count{stage=\"") + stage + "\"} 1\n"))
        << stage;
  }
}

// Point 9: under --insecure-dev a web page cannot drive the server (foreign Host, Origin, or a
// cross-site fetch), while a local client without a key still can.
TEST(InsecureDevTest, ForeignOriginsAndHostsAreRefused) {
  testing::TempDir dir;
  const auto store = dir / "dev";
  ASSERT_EQ(testing::RunCli(store, {"init", "--no-synonyms"}).first, 0);
  auto dev = ServerProcess::Start(store, {"--insecure-dev"});
  ASSERT_NE(dev, nullptr);
  auto client = dev->Client();
  const json body = {{"namespace", "dev"}, {"text", "written by a page"}};
  const std::vector<httplib::Headers> hostile = {
      {{"Origin", "https://evil.example"}},
      {{"Sec-Fetch-Site", "cross-site"}},
      {{"Origin", "null"}},
  };
  for (const httplib::Headers& headers : hostile) {
    Answer a = SendJson(*client, "POST", "/v1/memories", "", body, headers);
    EXPECT_EQ(a.status, 403) << a.body;
    EXPECT_EQ(a.error_code(), "forbidden_origin");
  }
  httplib::Client rebound("127.0.0.1", dev->port());  // DNS rebinding: the page's name in Host
  rebound.set_connection_timeout(5, 0);
  rebound.set_read_timeout(10, 0);
  auto result = rebound.Post("/v1/memories", {{"Host", "evil.example"}}, body.dump(), "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 403) << result->body;
  Answer search =
      SendJson(*client, "POST", "/v1/memories/search", "", {{"namespace", "dev"}, {"query", "page"}});
  ASSERT_EQ(search.status, 200) << search.body;
  EXPECT_TRUE(search.json()["hits"].empty()) << "nothing was written";
  Answer local = SendJson(*client, "POST", "/v1/memories", "", body, {{"Origin", "http://localhost:3000"}});
  EXPECT_EQ(local.status, 201) << local.body;
}

}  // namespace
}  // namespace bulwark
