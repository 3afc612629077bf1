// The MCP tools Bulwark offers: names and argument names follow Mem0's MCP server (mem0-mcp) so
// agents' habits and hooks carry over; input schemas are JSON Schema 2020-12 with
// `additionalProperties: false`; annotations say honestly what each tool does
// (modelcontextprotocol.io/specification/2026-07-28/server/tools).
//
//   add_memory       write   not read-only, not destructive, not idempotent (each call adds one)
//   search_memories  read    read-only (through the read-time defenses)
//   get_memories     read    read-only (a bounded page, oldest first, keyset cursor)
//   get_memory       read    read-only
//   memory_history   read    read-only
//   update_memory    write   not destructive (history keeps the old text), not idempotent
//   delete_memory    write   destructive, idempotent
//
// The list depends on the caller's role: a reader sees the read tools only. Quarantine release and
// reject, purge, keys, principals and delete-all are never tools: an injected prompt must not be
// able to release a poison or erase memories (review is for humans, through the CLI or API).
#pragma once

#include <absl/status/status.h>

#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "auth/principal_registry.h"

namespace bulwark::mcp {

enum class ToolId {
  kAddMemory,
  kSearchMemories,
  kGetMemories,
  kGetMemory,
  kMemoryHistory,
  kUpdateMemory,
  kDeleteMemory
};

struct ToolSpec {
  ToolId id;
  std::string_view name;
  bool writes = false;  // needs the writer or admin role
  nlohmann::json
      definition;  // the Tool object of tools/list: name, title, description, inputSchema, annotations
};

// Every tool, in the deterministic order of tools/list.
const std::vector<ToolSpec>& AllTools();
// The tool named `name`, or null.
const ToolSpec* FindTool(std::string_view name);
// True if a principal with `role` is offered (and may call) `tool`.
bool OfferedTo(const ToolSpec& tool, Role role);
// The `tools` array of tools/list for `role`.
nlohmann::json ToolsFor(Role role);

// Checks `arguments` against the subset of JSON Schema the tool table uses: type object with
// `properties`, `required`, `additionalProperties: false`; per property `type` (string, integer,
// object, boolean), `enum`, `minLength`/`maxLength` (in bytes), `minimum`/`maximum`.
// InvalidArgument naming the first offending argument otherwise.
[[nodiscard]] absl::Status ValidateArguments(const nlohmann::json& input_schema,
                                             const nlohmann::json& arguments);

// Largest text of add_memory/update_memory and largest query, in bytes.
inline constexpr int kMaxTextBytes = 16384;
inline constexpr int kMaxSearchLimit = 20;
inline constexpr int kMaxPageLimit = 100;

}  // namespace bulwark::mcp
