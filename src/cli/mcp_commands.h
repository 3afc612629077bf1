// `bulwark mcp`: Bulwark's MCP server on stdio (newline-delimited JSON-RPC on stdin/stdout, logs on
// stderr), for MCP clients that only start local processes (Claude Desktop, editors' stdio configs).
//
//   bulwark mcp --store DIR [-n NS] [--honeypot-mode M]
//       embedded: opens the store in this process and serves the tools with the service's own
//       handlers (server/mcp_service.h) as principal local:$USER, role writer on every namespace
//       (default namespace -n). Several processes may serve one store at once.
//   bulwark mcp --url http://HOST:PORT[/mcp][?namespace=NS]
//       proxy: each message is POSTed to URL/mcp (with the URL's query string) with the API key of
//       $BULWARK_API_KEY and the MCP headers derived from the message; the answer is written back as one
//       line.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "cli/command_env.h"

namespace bulwark::cli {

class McpCommands : public CommandGroup {
 public:
  McpCommands();
  ~McpCommands() override;

  void Register(CLI::App& app) override;
  // The exit code when `mcp` was parsed (0 at the end of input; 1 if the store or the URL could not
  // be used; 2 for a bad flag combination); nullopt otherwise.
  std::optional<int> Run(const CommandEnv& env) override;

 private:
  struct Flags;
  std::unique_ptr<Flags> flags_;
};

// The stdio loop: reads `in` line by line, passes each non-blank line to `handle`, and writes what
// it returns (if anything) to `out` followed by a newline, flushed. A line longer than `max_line`
// bytes is discarded up to its newline and answered with a JSON-RPC parse error. Returns at the end
// of `in`.
void ServeStdio(std::istream& in, std::ostream& out, size_t max_line,
                const std::function<std::optional<std::string>(std::string_view line)>& handle);

// The MCP request headers a proxy adds for `line` (streamable-http.mdx "Request Metadata"):
// MCP-Protocol-Version from _meta, Mcp-Method, and Mcp-Name for tools/call (Base64-sentinel
// encoded when it is not plain header-safe ASCII). Empty for a line that is not a JSON object.
std::vector<std::pair<std::string, std::string>> ProxyHeaders(std::string_view line);

}  // namespace bulwark::cli
