// McpService over an in-process service (LocalService): each tool runs the API's own handler, so
// roles, tenant isolation, ownership of updates and the audit record hold for MCP calls exactly
// as for HTTP ones.
#include "server/mcp_service.h"

#include <gtest/gtest.h>

#include "server/local_service.h"
#include "testing/temp_dir.h"

namespace bulwark::server {
namespace {

using json = nlohmann::json;

Caller MakeCaller(std::string name, Role role, std::vector<std::string> namespaces) {
  Caller caller;
  caller.principal.name = std::move(name);
  caller.principal.role = role;
  caller.principal.namespaces = std::move(namespaces);
  caller.key_id = "k-" + caller.principal.name;
  return caller;
}

class McpServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = MemoryStore::Create(dir_.path() / "store", StoreOptions{});
    ASSERT_TRUE(created.ok()) << created.status();
    created->reset();
    auto local = LocalService::Open(dir_.path() / "store", StoreOptions{}, "monitor");
    ASSERT_TRUE(local.ok()) << local.status();
    local_ = *std::move(local);
    service_ = std::make_unique<McpService>(local_->context());
  }

  mcp::ToolOutput Run(const Caller& caller, std::string_view tool, json args, std::string default_ns = "") {
    const mcp::ToolSpec* spec = mcp::FindTool(tool);
    EXPECT_NE(spec, nullptr) << tool;
    mcp::CallInfo info{std::string(tool), "2026-07-28", "unit-client", "9", ""};
    return service_->Run(caller, default_ns, *spec, args, info);
  }

  std::vector<AuditRecord> Audit() {
    EXPECT_TRUE(local_->audit().Flush().ok());
    AuditQuery query;
    query.limit = 100;
    auto records = local_->audit().Query(query);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *records : std::vector<AuditRecord>{};
  }

  testing::TempDir dir_;
  std::unique_ptr<LocalService> local_;
  std::unique_ptr<McpService> service_;
  Caller bob_ = MakeCaller("bob", Role::kWriter, {"travel"});
};

TEST_F(McpServiceTest, AddAndSearchThroughTheHandlersAndTheAudit) {
  mcp::ToolOutput added = Run(bob_, "add_memory", {{"text", "Bob prefers aisle seats"}, {"source", "user"}});
  ASSERT_FALSE(added.is_error) << added.text;
  EXPECT_EQ(added.structured["namespace"], "travel");  // bob's only grant
  EXPECT_EQ(added.structured["status"], "stored");
  const std::string id = added.structured["id"];

  mcp::ToolOutput found = Run(bob_, "search_memories", {{"query", "aisle seats"}});
  ASSERT_FALSE(found.is_error) << found.text;
  ASSERT_EQ(found.structured["hits"].size(), 1u);
  EXPECT_EQ(found.structured["hits"][0]["id"], id);
  EXPECT_FALSE(found.structured["hits"][0].contains("report"));
  EXPECT_NE(found.text.find("text: \"Bob prefers aisle seats\""), std::string::npos) << found.text;

  bool saw_add = false, saw_search = false;
  for (const AuditRecord& r : Audit()) {
    if (r.operation != "add" && r.operation != "search") continue;
    (r.operation == "add" ? saw_add : saw_search) = true;
    EXPECT_EQ(r.principal, "bob");
    EXPECT_EQ(r.session, "mcp:unit-client");
    EXPECT_EQ(r.detail["key_id"], "k-bob");
    EXPECT_EQ(r.detail["mcp"]["tool"], r.operation == "add" ? "add_memory" : "search_memories");
    EXPECT_EQ(r.detail["mcp"]["client"], "unit-client");
  }
  EXPECT_TRUE(saw_add && saw_search);
}

TEST_F(McpServiceTest, NamespaceChoice) {
  Caller multi = MakeCaller("multi", Role::kWriter, {"a", "b"});
  mcp::ToolOutput none = Run(multi, "add_memory", {{"text", "x"}});
  ASSERT_TRUE(none.is_error);
  EXPECT_EQ(none.structured["error"]["code"], "missing_field") << none.text;
  EXPECT_EQ(Run(multi, "add_memory", {{"text", "x"}}, "b").structured["namespace"], "b");
  EXPECT_EQ(Run(multi, "add_memory", {{"text", "x"}, {"namespace", "a"}}, "b").structured["namespace"], "a");
}

TEST_F(McpServiceTest, TenantIsolationAndRoles) {
  const std::string id = Run(bob_, "add_memory", {{"text", "the budget is 2000 euros"}}).structured["id"];
  Caller eve = MakeCaller("eve", Role::kWriter, {"other"});
  mcp::ToolOutput probe = Run(eve, "get_memory", {{"memory_id", id}, {"namespace", "travel"}});
  mcp::ToolOutput missing =
      Run(eve, "get_memory", {{"memory_id", std::string(26, '0')}, {"namespace", "travel"}});
  ASSERT_TRUE(probe.is_error);
  EXPECT_EQ(probe.structured, missing.structured);  // ungranted answers like missing
  EXPECT_EQ(Run(eve, "add_memory", {{"text", "x"}, {"namespace", "travel"}}).structured["error"]["code"],
            "namespace_not_found");

  // The handlers refuse a reader's write even if a runner offered it the tool.
  Caller alice = MakeCaller("alice", Role::kReader, {"travel"});
  mcp::ToolOutput write = Run(alice, "add_memory", {{"text", "x"}});
  ASSERT_TRUE(write.is_error);
  EXPECT_EQ(write.structured["error"]["code"], "forbidden") << write.text;

  // Only the entry's last writer (or an admin) may change it; the refusal is audited.
  Caller carol = MakeCaller("carol", Role::kWriter, {"travel"});
  mcp::ToolOutput update =
      Run(carol, "update_memory", {{"memory_id", id}, {"text", "the budget is 9000 euros"}});
  ASSERT_TRUE(update.is_error);
  EXPECT_EQ(update.structured["error"]["code"], "forbidden");
  bool refused = false;
  for (const AuditRecord& r : Audit()) {
    refused |= r.operation == "refused" && r.principal == "carol" &&
               r.detail["route"] == "/mcp tools/call update_memory";
  }
  EXPECT_TRUE(refused);
}

TEST_F(McpServiceTest, GetMemoriesPagesWithFiltersAndSkipsDeleted) {
  std::vector<std::string> kept;
  for (int i = 0; i < 5; ++i) {
    mcp::ToolOutput added =
        Run(bob_, "add_memory",
            {{"text", "note " + std::to_string(i) + " on gardening"}, {"metadata", {{"even", i % 2 == 0}}}});
    ASSERT_FALSE(added.is_error) << added.text;
    if (i % 2 == 0) kept.push_back(added.structured["id"]);
  }
  ASSERT_FALSE(Run(bob_, "delete_memory", {{"memory_id", kept.back()}}).is_error);
  kept.pop_back();
  std::vector<std::string> seen;
  json cursor;
  for (int page = 0; page < 10; ++page) {
    json args = {{"limit", 1}, {"filters", {{"even", true}}}};
    if (cursor.is_string()) args["cursor"] = cursor;
    mcp::ToolOutput out = Run(bob_, "get_memories", args);
    ASSERT_FALSE(out.is_error) << out.text;
    for (const json& m : out.structured["memories"]) seen.push_back(m["id"]);
    cursor = out.structured["next_cursor"];
    if (cursor.is_null()) break;
  }
  EXPECT_EQ(seen, kept);
  EXPECT_TRUE(Run(bob_, "get_memories", {{"cursor", "not-an-id"}}).is_error);
}

}  // namespace
}  // namespace bulwark::server
