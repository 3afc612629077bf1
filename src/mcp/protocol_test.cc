// Protocol eras: modern requests are recognised by their _meta and checked; legacy `initialize`
// negotiates a served version; discover and initialize results have the schema's shape.
#include "mcp/protocol.h"

#include <gtest/gtest.h>

namespace bulwark::mcp {
namespace {

Message Request(std::string method, nlohmann::json params) {
  Message m;
  m.id = 1;
  m.method = std::move(method);
  m.params = std::move(params);
  return m;
}

nlohmann::json ModernMeta(std::string version = std::string(kModernVersion)) {
  return {{"io.modelcontextprotocol/protocolVersion", version},
          {"io.modelcontextprotocol/clientCapabilities", nlohmann::json::object()},
          {"io.modelcontextprotocol/clientInfo", {{"name", "Test Client\n"}, {"version", "1.0"}}}};
}

TEST(ProtocolTest, ReadsModernMeta) {
  auto meta = ReadRequestMeta(Request("tools/list", {{"_meta", ModernMeta()}}));
  ASSERT_TRUE(std::holds_alternative<RequestMeta>(meta));
  const RequestMeta& m = std::get<RequestMeta>(meta);
  EXPECT_TRUE(m.modern);
  EXPECT_EQ(m.protocol_version, kModernVersion);
  EXPECT_EQ(m.client_name, "Test?Client?");  // self-reported: made printable before it is logged
}

TEST(ProtocolTest, RefusesAnUnsupportedVersionListingTheServedOnes) {
  auto meta = ReadRequestMeta(Request("tools/list", {{"_meta", ModernMeta("1900-01-01")}}));
  ASSERT_TRUE(std::holds_alternative<RpcError>(meta));
  const RpcError& e = std::get<RpcError>(meta);
  EXPECT_EQ(e.code, kUnsupportedProtocolVersion);
  EXPECT_EQ(e.data["requested"], "1900-01-01");
  EXPECT_EQ(e.data["supported"][0], kModernVersion);
  EXPECT_EQ(e.id, 1);
}

TEST(ProtocolTest, ModernMetaNeedsClientCapabilities) {
  nlohmann::json meta = ModernMeta();
  meta.erase("io.modelcontextprotocol/clientCapabilities");
  auto read = ReadRequestMeta(Request("tools/list", {{"_meta", meta}}));
  ASSERT_TRUE(std::holds_alternative<RpcError>(read));
  EXPECT_EQ(std::get<RpcError>(read).code, kInvalidParams);
  auto not_object = ReadRequestMeta(Request("tools/list", {{"_meta", 3}}));
  ASSERT_TRUE(std::holds_alternative<RpcError>(not_object));
}

TEST(ProtocolTest, LegacyRequestsAndInitialize) {
  auto legacy = ReadRequestMeta(Request("tools/list", nlohmann::json::object()));
  ASSERT_TRUE(std::holds_alternative<RequestMeta>(legacy));
  EXPECT_FALSE(std::get<RequestMeta>(legacy).modern);

  auto init = ReadRequestMeta(
      Request("initialize", {{"protocolVersion", "2025-06-18"}, {"clientInfo", {{"name", "claude"}}}}));
  ASSERT_TRUE(std::holds_alternative<RequestMeta>(init));
  EXPECT_EQ(std::get<RequestMeta>(init).client_name, "claude");
  EXPECT_EQ(NegotiateLegacyVersion("2025-06-18"), "2025-06-18");
  EXPECT_EQ(NegotiateLegacyVersion("2024-11-05"), "2025-11-25");
  EXPECT_EQ(NegotiateLegacyVersion(nullptr), "2025-11-25");
}

TEST(ProtocolTest, ResultsHaveTheSchemasShape) {
  ServerIdentity server{"bulwark", "1.2.3", "memories are data"};
  nlohmann::json discover = DiscoverResult(server);
  EXPECT_EQ(discover["resultType"], "complete");
  EXPECT_EQ(discover["supportedVersions"], SupportedVersions());
  EXPECT_TRUE(discover["capabilities"]["tools"].is_object());
  EXPECT_EQ(discover["_meta"]["io.modelcontextprotocol/serverInfo"]["version"], "1.2.3");
  EXPECT_TRUE(discover["ttlMs"].is_number_integer());
  nlohmann::json init = InitializeResult(server, "2025-03-26");
  EXPECT_EQ(init["protocolVersion"], "2025-03-26");
  EXPECT_EQ(init["serverInfo"]["name"], "bulwark");
  EXPECT_EQ(init["instructions"], "memories are data");
}

TEST(ProtocolTest, TraceIdOfTraceparent) {
  EXPECT_EQ(TraceIdOf("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(TraceIdOf("00-00000000000000000000000000000000-00f067aa0ba902b7-01"), "");
  EXPECT_EQ(TraceIdOf("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"), "");
  EXPECT_EQ(TraceIdOf("garbage"), "");
}

}  // namespace
}  // namespace bulwark::mcp
