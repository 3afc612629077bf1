// `bulwark mcp` (see mcp_commands.h).
#include "cli/mcp_commands.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>

#include "mcp/dispatcher.h"
#include "net/base_url.h"
#include "net/json_http_client.h"
#include "server/local_service.h"
#include "server/mcp_service.h"

namespace bulwark::cli {
namespace {

using json = nlohmann::json;

constexpr int kProxyTimeoutMs = 60000;

// "=?base64?...?=" unless `value` is visible ASCII and spaces with no blank at either end and does
// not itself look like the sentinel.
std::string HeaderSafe(const std::string& value) {
  bool plain = !value.empty() && value.front() != ' ' && value.back() != ' ' &&
               !(value.starts_with("=?base64?") && value.ends_with("?="));
  for (char c : value) plain = plain && c >= 0x20 && c <= 0x7e;
  return plain ? value : absl::StrCat("=?base64?", absl::Base64Escape(value), "?=");
}

// The id of `line` if it is a request, for an error the proxy writes itself; null otherwise.
json RequestIdOf(std::string_view line) {
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("method") || !doc.contains("id")) return nullptr;
  return doc["id"];
}

std::optional<std::string> ProxyError(const json& id, std::string message) {
  if (id.is_null()) return std::nullopt;  // a notification gets no answer
  return mcp::Serialize(
      mcp::ErrorResponse(mcp::RpcError{mcp::kInternalError, std::move(message), nullptr, id}));
}

// Forwards one line to POST <prefix>/mcp and returns what to print.
std::optional<std::string> Forward(httplib::Client& client, const std::string& path,
                                   const std::string& api_key, std::string_view line) {
  httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
  if (!api_key.empty()) headers.emplace("Authorization", absl::StrCat("Bearer ", api_key));
  for (auto& [name, value] : ProxyHeaders(line)) headers.emplace(name, value);
  auto res = client.Post(path, headers, std::string(line), "application/json");
  if (!res) {
    spdlog::error("mcp proxy: POST {} failed: {}", path, httplib::to_string(res.error()));
    return ProxyError(RequestIdOf(line),
                      absl::StrCat("cannot reach the Bulwark server: ", httplib::to_string(res.error())));
  }
  if (res->body.empty()) return std::nullopt;  // 202: an accepted notification
  json body = json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object() && body.contains("jsonrpc")) return mcp::Serialize(body);
  // An API error before the MCP endpoint (401, 429, 503 ...): {"error": {"code", "message"}}.
  std::string reason = body.is_object() && body.contains("error") && body["error"].is_object()
                           ? body["error"].value("message", "")
                           : std::string();
  spdlog::error("mcp proxy: HTTP {}: {}", res->status, reason);
  return ProxyError(RequestIdOf(line), absl::StrCat("the Bulwark server answered HTTP ", res->status,
                                                    reason.empty() ? "" : ": ", reason));
}

std::string LocalPrincipal() {
  const char* user = std::getenv("USER");
  return absl::StrCat("local:", user && *user ? user : "cli");
}

int RunEmbedded(const CommandEnv& env, const std::string& honeypot_mode) {
  auto local = server::LocalService::Open(env.store, env.store_options, honeypot_mode);
  if (!local.ok()) return FailCommand(env, local.status());
  server::McpService service((*local)->context());
  server::Caller caller;
  caller.principal.name = LocalPrincipal();
  caller.principal.role = Role::kWriter;  // review, purge and keys stay with the CLI's own commands
  caller.principal.namespaces = {"*"};
  caller.key_id = "local";
  server::CallerToolRunner runner(service, caller, env.name_space);
  const mcp::Dispatcher dispatcher(mcp::BulwarkIdentity());
  spdlog::info("bulwark mcp: serving store {} on stdio as {}", env.store, caller.principal.name);
  ServeStdio(std::cin, std::cout, mcp::kMaxMessageBytes,
             [&](std::string_view line) -> std::optional<std::string> {
               mcp::Outcome outcome = dispatcher.Handle(line, nullptr, runner);
               if (!outcome.response) return std::nullopt;
               return mcp::Serialize(*outcome.response);
             });
  return 0;
}

int RunProxy(const CommandEnv& env, const std::string& url) {
  // "http://HOST:PORT[/prefix][/mcp][?namespace=NS]": the query string is kept for every POST.
  const size_t mark = url.find('?');
  const std::string query = mark == std::string::npos ? "" : url.substr(mark);
  auto base = ParseBaseUrl(url.substr(0, mark));
  if (!base.ok()) return FailCommand(env, base.status());
  const char* key = std::getenv("BULWARK_API_KEY");
  const std::string api_key = key != nullptr ? key : "";
  if (api_key.empty()) spdlog::warn("bulwark mcp: $BULWARK_API_KEY is not set; requests carry no API key");
  std::unique_ptr<httplib::Client> client = MakeKeepAliveClient(*base, kProxyTimeoutMs);
  const std::string path =
      absl::StrCat(base->prefix.ends_with("/mcp") ? base->prefix : absl::StrCat(base->prefix, "/mcp"), query);
  ServeStdio(std::cin, std::cout, mcp::kMaxMessageBytes,
             [&](std::string_view line) { return Forward(*client, path, api_key, line); });
  return 0;
}

}  // namespace

struct McpCommands::Flags {
  CLI::App* mcp = nullptr;
  std::string url;
  std::string honeypot_mode = "monitor";
};

McpCommands::McpCommands() : flags_(std::make_unique<Flags>()) {}
McpCommands::~McpCommands() = default;

void McpCommands::Register(CLI::App& app) {
  Flags& f = *flags_;
  f.mcp = app.add_subcommand(
      "mcp", "serve MCP on stdio: embedded on --store, or a proxy to a server's /mcp (--url)");
  f.mcp->add_option(
      "--url", f.url,
      "proxy to this Bulwark server (http://HOST:PORT); the API key comes from $BULWARK_API_KEY");
  f.mcp
      ->add_option("--honeypot-mode", f.honeypot_mode,
                   "embedded: the honeypot monitor's mode (off|monitor|block)")
      ->capture_default_str();
  f.mcp->footer(
      "Embedded (no --url): opens --store in this process; tools act as local:$USER, a writer on every "
      "namespace, default namespace -n.");
}

std::optional<int> McpCommands::Run(const CommandEnv& env) {
  Flags& f = *flags_;
  if (f.mcp == nullptr || !f.mcp->parsed()) return std::nullopt;
  if (!f.url.empty()) {
    if (env.store_given) {
      env.err << "error: give --store (embedded) or --url (proxy), not both\n";
      return 2;
    }
    return RunProxy(env, f.url);
  }
  return RunEmbedded(env, f.honeypot_mode);
}

void ServeStdio(std::istream& in, std::ostream& out, size_t max_line,
                const std::function<std::optional<std::string>(std::string_view line)>& handle) {
  std::string line;
  bool too_long = false;
  auto finish = [&] {
    std::optional<std::string> answer;
    if (too_long) {
      answer = mcp::Serialize(
          mcp::ErrorResponse(mcp::RpcError{mcp::kParseError, "message too large", nullptr, nullptr}));
    } else if (line.find_first_not_of(" \t\r") != std::string::npos) {
      answer = handle(line);
    }
    if (answer) out << *answer << "\n" << std::flush;
    line.clear();
    too_long = false;
  };
  for (int c = in.get(); c != std::char_traits<char>::eof(); c = in.get()) {
    if (c == '\n') {
      finish();
    } else if (!too_long) {
      line.push_back(static_cast<char>(c));
      if (line.size() > max_line) {
        too_long = true;
        line.clear();
      }
    }
  }
  if (!line.empty() || too_long) finish();
}

std::vector<std::pair<std::string, std::string>> ProxyHeaders(std::string_view line) {
  std::vector<std::pair<std::string, std::string>> headers;
  json doc = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("method") || !doc["method"].is_string()) return headers;
  const std::string method = doc["method"].get<std::string>();
  headers.emplace_back("Mcp-Method", HeaderSafe(method));
  const json params = doc.value("params", json::object());
  if (!params.is_object()) return headers;
  const json meta = params.value("_meta", json::object());
  if (meta.is_object()) {
    if (auto v = meta.find(std::string(mcp::kMetaProtocolVersion)); v != meta.end() && v->is_string()) {
      headers.emplace_back("MCP-Protocol-Version", HeaderSafe(v->get<std::string>()));
    }
  }
  if (method == "tools/call" && params.contains("name") && params["name"].is_string()) {
    headers.emplace_back("Mcp-Name", HeaderSafe(params["name"].get<std::string>()));
  }
  return headers;
}

}  // namespace bulwark::cli
