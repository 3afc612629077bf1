// JSON-RPC framing: requests, notifications and responses are told apart; every malformed message
// gets the right code and, when it can be read, the request's id.
#include "mcp/json_rpc.h"

#include <gtest/gtest.h>

#include <string>

namespace bulwark::mcp {
namespace {

RpcError ErrorOf(std::string_view text) {
  auto decoded = DecodeMessage(text);
  EXPECT_TRUE(std::holds_alternative<RpcError>(decoded)) << text;
  return std::holds_alternative<RpcError>(decoded) ? std::get<RpcError>(decoded) : RpcError{};
}

TEST(JsonRpcTest, DecodesRequestNotificationAndResponse) {
  auto request = DecodeMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}})");
  ASSERT_TRUE(std::holds_alternative<Message>(request));
  EXPECT_EQ(std::get<Message>(request).kind, Message::Kind::kRequest);
  EXPECT_EQ(std::get<Message>(request).id, 7);
  EXPECT_EQ(std::get<Message>(request).params["a"], 1);

  auto note = DecodeMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(std::holds_alternative<Message>(note));
  EXPECT_EQ(std::get<Message>(note).kind, Message::Kind::kNotification);
  EXPECT_TRUE(std::get<Message>(note).params.is_object());

  auto response = DecodeMessage(R"({"jsonrpc":"2.0","id":"x","result":{}})");
  ASSERT_TRUE(std::holds_alternative<Message>(response));
  EXPECT_EQ(std::get<Message>(response).kind, Message::Kind::kResponse);
}

TEST(JsonRpcTest, RefusesMalformedMessages) {
  EXPECT_EQ(ErrorOf("{not json").code, kParseError);
  EXPECT_EQ(ErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"a","method":"b"})").code, kParseError);
  EXPECT_EQ(ErrorOf(std::string(100, '[') + std::string(100, ']')).code, kParseError);
  EXPECT_EQ(ErrorOf(std::string(kMaxMessageBytes + 1, ' ')).code, kParseError);
  RpcError batch = ErrorOf(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
  EXPECT_EQ(batch.code, kInvalidRequest);
  EXPECT_NE(batch.message.find("batch"), std::string::npos) << batch.message;
  EXPECT_EQ(ErrorOf(R"("hello")").code, kInvalidRequest);
  EXPECT_EQ(ErrorOf(R"({"jsonrpc":"2.0","id":null,"method":"ping"})").code, kInvalidRequest);
  EXPECT_EQ(ErrorOf(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})").code, kInvalidRequest);
  RpcError version = ErrorOf(R"({"jsonrpc":"1.0","id":3,"method":"ping"})");
  EXPECT_EQ(version.code, kInvalidRequest);
  EXPECT_EQ(version.id, 3);  // the id is kept when it could be read
  EXPECT_EQ(ErrorOf(R"({"jsonrpc":"2.0","id":1,"method":5})").code, kInvalidRequest);
  EXPECT_EQ(ErrorOf(R"({"jsonrpc":"2.0","id":1,"method":"a","params":[1]})").code, kInvalidRequest);
  EXPECT_EQ(ErrorOf(R"({"jsonrpc":"2.0","id":1})").code, kInvalidRequest);
}

TEST(JsonRpcTest, BuildsResponsesOnOneLine) {
  nlohmann::json ok = ResultResponse("a", {{"x", "line1\nline2"}});
  EXPECT_EQ(ok["id"], "a");
  const std::string wire = Serialize(ok);
  EXPECT_EQ(wire.find('\n'), std::string::npos) << wire;

  nlohmann::json error = ErrorResponse(RpcError{kParseError, "bad", nullptr, nullptr});
  EXPECT_FALSE(error.contains("id"));
  EXPECT_EQ(error["error"]["code"], kParseError);
  EXPECT_FALSE(error["error"].contains("data"));
}

}  // namespace
}  // namespace bulwark::mcp
