// The tool table: Mem0's names, honest annotations, a list that depends on the role and never
// offers a review, purge or key tool, and argument checks that follow each schema.
#include "mcp/tool_table.h"

#include <gtest/gtest.h>

#include <set>

#include "testing/status_matchers.h"

namespace bulwark::mcp {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

std::set<std::string> Names(const nlohmann::json& tools) {
  std::set<std::string> out;
  for (const auto& t : tools) out.insert(t["name"].get<std::string>());
  return out;
}

TEST(ToolTableTest, ListDependsOnRole) {
  const std::set<std::string> read = {"search_memories", "get_memories", "get_memory", "memory_history"};
  EXPECT_EQ(Names(ToolsFor(Role::kReader)), read);
  std::set<std::string> all = read;
  all.insert({"add_memory", "update_memory", "delete_memory"});
  EXPECT_EQ(Names(ToolsFor(Role::kWriter)), all);
  EXPECT_EQ(Names(ToolsFor(Role::kAdmin)), all);                // admins get no extra tool over MCP
  EXPECT_EQ(ToolsFor(Role::kWriter), ToolsFor(Role::kWriter));  // deterministic order
}

TEST(ToolTableTest, NoReviewPurgeOrKeyTool) {
  for (const ToolSpec& tool : AllTools()) {
    for (std::string_view word :
         {"release", "reject", "purge", "key", "principal", "delete_all", "quarantine"}) {
      EXPECT_EQ(tool.name.find(word), std::string_view::npos) << tool.name;
    }
  }
}

TEST(ToolTableTest, AnnotationsAreHonest) {
  for (const ToolSpec& tool : AllTools()) {
    const nlohmann::json& a = tool.definition["annotations"];
    EXPECT_EQ(a["readOnlyHint"], !tool.writes) << tool.name;
    EXPECT_EQ(a["openWorldHint"], false) << tool.name;
    EXPECT_EQ(tool.definition["inputSchema"]["additionalProperties"], false) << tool.name;
  }
  EXPECT_EQ(FindTool("delete_memory")->definition["annotations"]["destructiveHint"], true);
  EXPECT_EQ(FindTool("delete_memory")->definition["annotations"]["idempotentHint"], true);
  EXPECT_EQ(FindTool("add_memory")->definition["annotations"]["destructiveHint"], false);
  EXPECT_EQ(FindTool("add_memory")->definition["annotations"]["idempotentHint"], false);
  EXPECT_EQ(FindTool("update_memory")->definition["annotations"]["destructiveHint"], false);
  EXPECT_EQ(FindTool("nope"), nullptr);
}

TEST(ToolTableTest, ValidatesArgumentsAgainstTheSchema) {
  const nlohmann::json& add = FindTool("add_memory")->definition["inputSchema"];
  EXPECT_THAT(ValidateArguments(add, {{"text", "hi"}, {"source", "user"}, {"metadata", {{"a", 1}}}}), IsOk());
  EXPECT_THAT(ValidateArguments(add, nlohmann::json::object()), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(add, {{"text", ""}}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(add, {{"text", std::string(kMaxTextBytes + 1, 'a')}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(add, {{"text", "x"}, {"source", "system"}}),
              StatusIs(absl::StatusCode::kInvalidArgument));  // only admins write "system", never over MCP
  EXPECT_THAT(ValidateArguments(add, {{"text", "x"}, {"principal", "bob"}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(add, {{"text", 3}}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(add, nlohmann::json::array()), StatusIs(absl::StatusCode::kInvalidArgument));
  const nlohmann::json& search = FindTool("search_memories")->definition["inputSchema"];
  EXPECT_THAT(ValidateArguments(search, {{"query", "q"}, {"limit", 20}}), IsOk());
  EXPECT_THAT(ValidateArguments(search, {{"query", "q"}, {"limit", 21}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(search, {{"query", "q"}, {"limit", 0}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateArguments(search, {{"query", "q"}, {"limit", 2.5}}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace bulwark::mcp
