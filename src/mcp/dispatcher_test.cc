// The dispatcher: both eras on one entry point, the Streamable HTTP header rules, notifications,
// role-dependent tools, and argument validation before any tool runs.
#include "mcp/dispatcher.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bulwark::mcp {
namespace {

using json = nlohmann::json;

class FakeRunner : public ToolRunner {
 public:
  explicit FakeRunner(Role role) : role_(role) {}
  Role role() const override { return role_; }
  ToolOutput Run(const ToolSpec& tool, const json& arguments, const CallInfo& info) override {
    calls.push_back(info);
    return ToolOutput{
        {{"tool", tool.name}, {"arguments", arguments}}, "ran " + std::string(tool.name), false};
  }
  std::vector<CallInfo> calls;

 private:
  Role role_;
};

json Meta() {
  return {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
          {"io.modelcontextprotocol/clientCapabilities", json::object()},
          {"io.modelcontextprotocol/clientInfo", {{"name", "tester"}, {"version", "1"}}}};
}

std::string Modern(std::string method, json params = json::object(), json id = 1) {
  params["_meta"] = Meta();
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

HttpHeaders ModernHeaders(std::string method, std::optional<std::string> name = std::nullopt) {
  HttpHeaders h;
  h.protocol_version = "2026-07-28";
  h.method = std::move(method);
  h.name = std::move(name);
  return h;
}

class DispatcherTest : public ::testing::Test {
 protected:
  Dispatcher dispatcher_{ServerIdentity{"bulwark", "0.test", "memories are data"}};
  FakeRunner writer_{Role::kWriter};
  FakeRunner reader_{Role::kReader};
};

TEST_F(DispatcherTest, ModernDiscoverAndToolsList) {
  HttpHeaders h = ModernHeaders("server/discover");
  Outcome discover = dispatcher_.Handle(Modern("server/discover"), &h, writer_);
  ASSERT_TRUE(discover.response);
  EXPECT_EQ(discover.http_status, 200);
  EXPECT_EQ((*discover.response)["result"]["supportedVersions"][0], "2026-07-28");
  EXPECT_EQ((*discover.response)["result"]["resultType"], "complete");

  h = ModernHeaders("tools/list");
  Outcome list = dispatcher_.Handle(Modern("tools/list"), &h, reader_);
  ASSERT_TRUE(list.response);
  const json& result = (*list.response)["result"];
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["cacheScope"], "private");
  EXPECT_EQ(result["tools"].size(), 4u);  // a reader sees the read-only tools
}

TEST_F(DispatcherTest, LegacyInitializeThenStatelessCalls) {
  const std::string init =
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",
          "capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}})";
  Outcome o = dispatcher_.Handle(init, nullptr, writer_);
  ASSERT_TRUE(o.response);
  EXPECT_EQ((*o.response)["result"]["protocolVersion"], "2025-06-18");
  EXPECT_FALSE((*o.response)["result"].contains("resultType"));  // legacy results keep their shape

  Outcome note =
      dispatcher_.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", nullptr, writer_);
  EXPECT_FALSE(note.response);
  EXPECT_EQ(note.http_status, 202);

  Outcome list = dispatcher_.Handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", nullptr, writer_);
  ASSERT_TRUE(list.response);
  EXPECT_EQ((*list.response)["result"]["tools"].size(), 7u);
  Outcome ping = dispatcher_.Handle(R"({"jsonrpc":"2.0","id":2,"method":"ping"})", nullptr, writer_);
  EXPECT_EQ((*ping.response)["result"], json::object());
}

TEST_F(DispatcherTest, HeaderRules) {
  const std::string call =
      Modern("tools/call", {{"name", "get_memory"}, {"arguments", {{"memory_id", std::string(26, 'A')}}}});
  auto code_of = [&](const HttpHeaders& h) {
    Outcome o = dispatcher_.Handle(call, &h, writer_);
    EXPECT_EQ(o.http_status, 400);
    return o.response ? (*o.response)["error"]["code"].get<int>() : 0;
  };
  HttpHeaders missing_version = ModernHeaders("tools/call", "get_memory");
  missing_version.protocol_version.reset();
  EXPECT_EQ(code_of(missing_version), kHeaderMismatch);
  EXPECT_EQ(code_of(ModernHeaders("tools/list", "get_memory")), kHeaderMismatch);
  EXPECT_EQ(code_of(ModernHeaders("tools/call")), kHeaderMismatch);  // Mcp-Name required for tools/call
  EXPECT_EQ(code_of(ModernHeaders("tools/call", "delete_memory")), kHeaderMismatch);
  EXPECT_EQ(code_of(ModernHeaders("tools/call", "=?base64?!!!?=")), kHeaderMismatch);
  HttpHeaders other_version = ModernHeaders("tools/call", "get_memory");
  other_version.protocol_version = "2025-11-25";
  EXPECT_EQ(code_of(other_version), kHeaderMismatch);

  HttpHeaders encoded = ModernHeaders("tools/call", "=?base64?Z2V0X21lbW9yeQ==?=");  // "get_memory"
  Outcome ok = dispatcher_.Handle(call, &encoded, writer_);
  EXPECT_EQ(ok.http_status, 200) << ok.response->dump();
  ASSERT_EQ(writer_.calls.size(), 1u);
  EXPECT_EQ(writer_.calls[0].client_name, "tester");
  EXPECT_EQ(writer_.calls[0].session, "");  // no session named: the runner picks one
}

TEST_F(DispatcherTest, VersionAndMethodErrors) {
  json params = {{"_meta", Meta()}};
  params["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1900-01-01";
  const std::string old =
      json{{"jsonrpc", "2.0"}, {"id", 5}, {"method", "tools/list"}, {"params", params}}.dump();
  Outcome o = dispatcher_.Handle(old, nullptr, writer_);
  EXPECT_EQ(o.http_status, 400);
  EXPECT_EQ((*o.response)["error"]["code"], kUnsupportedProtocolVersion);
  EXPECT_EQ((*o.response)["id"], 5);

  HttpHeaders h = ModernHeaders("resources/list");
  Outcome unknown = dispatcher_.Handle(Modern("resources/list"), &h, writer_);
  EXPECT_EQ(unknown.http_status, 404);
  EXPECT_EQ((*unknown.response)["error"]["code"], kMethodNotFound);

  HttpHeaders legacy;
  legacy.protocol_version = "1999-01-01";
  Outcome bad_legacy =
      dispatcher_.Handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", &legacy, writer_);
  EXPECT_EQ(bad_legacy.http_status, 400);
  EXPECT_EQ((*bad_legacy.response)["error"]["code"], kUnsupportedProtocolVersion);

  Outcome batch = dispatcher_.Handle("[]", nullptr, writer_);
  EXPECT_EQ(batch.http_status, 400);
  EXPECT_EQ((*batch.response)["error"]["code"], kInvalidRequest);
}

TEST_F(DispatcherTest, ToolsAreCheckedBeforeTheyRun) {
  // A reader calling a write tool is told it does not exist, and nothing runs.
  const std::string add =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":"x"}}})";
  Outcome refused = dispatcher_.Handle(add, nullptr, reader_);
  EXPECT_EQ((*refused.response)["error"]["code"], kInvalidParams);
  EXPECT_TRUE(reader_.calls.empty());
  // Invalid arguments come back as a failed call the model can read, and nothing runs.
  const std::string bad =
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":"x","principal":"root"}}})";
  Outcome invalid = dispatcher_.Handle(bad, nullptr, writer_);
  ASSERT_TRUE(invalid.response);
  EXPECT_EQ((*invalid.response)["result"]["isError"], true);
  EXPECT_TRUE(writer_.calls.empty());
  Outcome ran = dispatcher_.Handle(add, nullptr, writer_);
  EXPECT_EQ((*ran.response)["result"]["content"][0]["text"], "ran add_memory");
  EXPECT_EQ((*ran.response)["result"]["structuredContent"]["tool"], "add_memory");
  EXPECT_FALSE((*ran.response)["result"].contains("isError"));
  ASSERT_EQ(writer_.calls.size(), 1u);
  EXPECT_EQ(writer_.calls[0].protocol_version, "legacy");
}

TEST_F(DispatcherTest, SessionChoice) {
  json params = {{"name", "get_memory"}, {"arguments", {{"memory_id", std::string(26, 'A')}}}};
  params["_meta"] = Meta();
  params["_meta"]["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const std::string body =
      json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", params}}.dump();
  dispatcher_.Handle(body, nullptr, writer_);
  params["_meta"]["io.bulwark/session"] = "s-42";
  const std::string with_session =
      json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"}, {"params", params}}.dump();
  dispatcher_.Handle(with_session, nullptr, writer_);
  ASSERT_EQ(writer_.calls.size(), 2u);
  EXPECT_EQ(writer_.calls[0].session, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(writer_.calls[1].session, "s-42");
}

}  // namespace
}  // namespace bulwark::mcp
