// JSON-RPC 2.0 framing for MCP (see json_rpc.h).
#include "mcp/json_rpc.h"

#include <set>
#include <variant>
#include <vector>

namespace bulwark::mcp {
namespace {

RpcError Invalid(int code, std::string message, nlohmann::json id = nullptr) {
  return RpcError{code, std::move(message), nullptr, std::move(id)};
}

// MCP ids: a string, or an integer (a JSON number without fraction).
bool IsValidId(const nlohmann::json& id) { return id.is_string() || id.is_number_integer(); }

struct ParseAbort {
  std::string message;
};

// Parses `text` as JSON, refusing nesting deeper than kMaxDepth and duplicate object keys (a
// duplicated "method" or "name" would let the headers and the body name different things).
std::optional<nlohmann::json> ParseStrict(std::string_view text, std::string* error) {
  std::vector<std::set<std::string>> open;  // keys seen per open object (arrays: an empty set)
  auto callback = [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start || event == Event::array_start) {
      open.emplace_back();
      if (static_cast<int>(open.size()) > kMaxDepth) throw ParseAbort{"message nested too deeply"};
    } else if (event == Event::object_end || event == Event::array_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == Event::key && !open.empty() &&
               !open.back().insert(parsed.get<std::string>()).second) {
      throw ParseAbort{"duplicate member \"" + parsed.get<std::string>() + "\""};
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true);
  } catch (const ParseAbort& abort) {
    *error = "parse error: " + abort.message;
  } catch (const nlohmann::json::exception&) {
    *error = "parse error: the message is not valid JSON";
  }
  return std::nullopt;
}

}  // namespace

std::variant<Message, RpcError> DecodeMessage(std::string_view text) {
  if (text.size() > kMaxMessageBytes) return Invalid(kParseError, "message too large");
  std::string error;
  std::optional<nlohmann::json> parsed = ParseStrict(text, &error);
  if (!parsed) return Invalid(kParseError, error);
  nlohmann::json& doc = *parsed;
  if (doc.is_array()) {
    return Invalid(kInvalidRequest, "batches are not supported: send one JSON-RPC message per request");
  }
  if (!doc.is_object()) return Invalid(kInvalidRequest, "a JSON-RPC message must be an object");
  nlohmann::json id = nullptr;
  const bool has_id = doc.contains("id");
  if (has_id) {
    id = doc["id"];
    if (!IsValidId(id)) return Invalid(kInvalidRequest, "the id must be a string or an integer");
  }
  auto version = doc.find("jsonrpc");
  if (version == doc.end() || *version != "2.0") {
    return Invalid(kInvalidRequest, "\"jsonrpc\" must be \"2.0\"", id);
  }
  Message message;
  message.id = id;
  auto method = doc.find("method");
  if (method == doc.end()) {
    if (has_id && (doc.contains("result") || doc.contains("error"))) {
      message.kind = Message::Kind::kResponse;
      return message;
    }
    return Invalid(kInvalidRequest, "a request needs a \"method\"", id);
  }
  if (!method->is_string()) return Invalid(kInvalidRequest, "\"method\" must be a string", id);
  message.method = method->get<std::string>();
  message.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
  if (auto params = doc.find("params"); params != doc.end()) {
    if (!params->is_object()) return Invalid(kInvalidRequest, "\"params\" must be an object", id);
    message.params = std::move(*params);
  }
  return message;
}

nlohmann::json ResultResponse(const nlohmann::json& id, nlohmann::json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

nlohmann::json ErrorResponse(const RpcError& error) {
  nlohmann::json body = {{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) body["data"] = error.data;
  nlohmann::json out = {{"jsonrpc", "2.0"}};
  if (!error.id.is_null()) out["id"] = error.id;
  out["error"] = std::move(body);
  return out;
}

std::string Serialize(const nlohmann::json& message) {
  // dump() escapes control characters inside strings, so the line holds no raw newline.
  return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace bulwark::mcp
