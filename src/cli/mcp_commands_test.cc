// The stdio pieces of `bulwark mcp`: line framing (bounded lines, blank lines, a last line
// without newline) and the MCP headers the proxy derives from a message.
#include "cli/mcp_commands.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace bulwark::cli {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

TEST(McpStdioTest, OneAnswerPerLineAndOversizedLinesRefused) {
  std::istringstream in("first\n\n   \n" + std::string(50, 'x') + "\nlast-without-newline");
  std::ostringstream out;
  std::vector<std::string> seen;
  ServeStdio(in, out, 20, [&](std::string_view line) -> std::optional<std::string> {
    seen.emplace_back(line);
    if (line == "first") return std::nullopt;  // a notification: nothing written
    return "echo:" + std::string(line);
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "last-without-newline"}));
  std::istringstream lines(out.str());
  std::string too_long, echoed, extra;
  ASSERT_TRUE(std::getline(lines, too_long));
  EXPECT_EQ(nlohmann::json::parse(too_long)["error"]["code"], -32700) << too_long;
  ASSERT_TRUE(std::getline(lines, echoed));
  EXPECT_EQ(echoed, "echo:last-without-newline");
  EXPECT_FALSE(std::getline(lines, extra));
}

TEST(McpStdioTest, ProxyHeadersFollowTheMessage) {
  const std::string modern =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_memory","arguments":{},
          "_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})";
  EXPECT_EQ(ProxyHeaders(modern), (Headers{{"Mcp-Method", "tools/call"},
                                           {"MCP-Protocol-Version", "2026-07-28"},
                                           {"Mcp-Name", "add_memory"}}));
  const std::string odd_name = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"café"}})";
  EXPECT_EQ(ProxyHeaders(odd_name),
            (Headers{{"Mcp-Method", "tools/call"}, {"Mcp-Name", "=?base64?Y2Fmw6k=?="}}));
  EXPECT_EQ(ProxyHeaders(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})"),
            (Headers{{"Mcp-Method", "initialize"}}));
  EXPECT_TRUE(ProxyHeaders("not json").empty());
  EXPECT_TRUE(ProxyHeaders("[1,2]").empty());
}

}  // namespace
}  // namespace bulwark::cli
