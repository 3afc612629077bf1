// Runs one adversarial case file against a running server (see case_runner.h).
#include "adversarial/case_runner.h"

#include <fstream>
#include <map>
#include <sstream>

namespace bulwark::testing {
namespace {

using nlohmann::json;
using Captures = std::map<std::string, std::string>;

// obj[key] if present, else `fallback` (by reference: no temporaries to iterate over).
const json& Member(const json& obj, const char* key, const json& fallback) {
  auto it = obj.find(key);
  return it == obj.end() ? fallback : *it;
}
const json kNoItems = json::array();
const json kNoMembers = json::object();

// Replaces every "${name}" of `text` by its captured value; an unknown name stays as it is (and
// the request then fails visibly).
std::string Substitute(std::string text, const Captures& captures) {
  for (const auto& [name, value] : captures) {
    const std::string token = "${" + name + "}";
    for (size_t pos = 0; (pos = text.find(token, pos)) != std::string::npos; pos += value.size()) {
      text.replace(pos, token.size(), value);
    }
  }
  return text;
}

json SubstituteJson(const json& value, const Captures& captures) {
  if (value.is_string()) return Substitute(value.get<std::string>(), captures);
  if (!value.is_structured()) return value;
  json out = value;
  for (auto& item : out.items()) item.value() = SubstituteJson(item.value(), captures);
  return out;
}

struct Reply {
  int status = 0;  // 0: no answer
  std::string body;
};

Reply Send(httplib::Client& client, const std::string& method, const std::string& path,
           const httplib::Headers& headers, const std::string& body, const std::string& content_type) {
  httplib::Result result(nullptr, httplib::Error::Unknown);
  if (method == "GET") {
    result = client.Get(path.c_str(), headers);
  } else if (method == "POST") {
    result = client.Post(path.c_str(), headers, body, content_type.c_str());
  } else if (method == "PATCH") {
    result = client.Patch(path.c_str(), headers, body, content_type.c_str());
  } else if (method == "PUT") {
    result = client.Put(path.c_str(), headers, body, content_type.c_str());
  } else if (method == "DELETE") {
    result = body.empty() ? client.Delete(path.c_str(), headers)
                          : client.Delete(path.c_str(), headers, body, content_type.c_str());
  }
  if (!result) return {};
  return {result->status, result->body};
}

// The expectations of `expect` against `reply`; failures appended to `failures` under `label`.
void Check(const json& expect, const Reply& reply, const std::string& label,
           std::vector<std::string>* failures) {
  auto fail = [&](const std::string& what) {
    failures->push_back(label + ": " + what + "; body: " + reply.body.substr(0, 300));
  };
  if (expect.contains("status") && expect["status"] != reply.status) {
    fail("status " + std::to_string(reply.status) + ", expected " + expect["status"].dump());
  }
  const json body = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (expect.contains("code")) {
    const bool has_error = body.is_object() && body.contains("error") && body["error"].is_object();
    const std::string code = has_error ? body["error"].value("code", "") : "";
    if (code != expect["code"]) fail("error code \"" + code + "\", expected " + expect["code"].dump());
  }
  for (const auto& [pointer, want] : Member(expect, "json", kNoMembers).items()) {
    const json::json_pointer p(pointer);
    if (!body.is_structured() || !body.contains(p)) {
      fail("no " + pointer);
    } else if (body[p] != want) {
      fail(pointer + " is " + body[p].dump() + ", expected " + want.dump());
    }
  }
  for (const json& text : Member(expect, "absent", kNoItems)) {
    if (reply.body.find(text.get<std::string>()) != std::string::npos) fail("contains " + text.dump());
  }
  for (const json& text : Member(expect, "present", kNoItems)) {
    if (reply.body.find(text.get<std::string>()) == std::string::npos) fail("lacks " + text.dump());
  }
}

void Capture(const json& capture, const Reply& reply, const std::string& label, Captures* captures,
             std::vector<std::string>* failures) {
  const json body = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  for (const auto& [name, pointer] : capture.items()) {
    const json::json_pointer p(pointer.get<std::string>());
    if (body.is_structured() && body.contains(p) && body[p].is_string()) {
      (*captures)[name] = body[p].get<std::string>();
    } else {
      failures->push_back(label + ": cannot capture " + name + " from " + pointer.dump());
    }
  }
}

// Runs one step; returns false if the run must stop (the step was malformed).
bool RunStep(const json& step, size_t index, httplib::Client& client,
             const std::map<std::string, std::string>& keys, Captures* captures,
             std::vector<std::string>* failures) {
  const std::string method = step.value("method", "GET");
  const std::string path = Substitute(step.value("path", ""), *captures);
  const std::string label = "step " + std::to_string(index) + " (" + method + " " + path + ")";
  const std::string as = step.value("as", "admin");
  if (as != "anonymous" && !keys.count(as)) {
    failures->push_back(label + ": unknown principal \"" + as + "\"");
    return false;
  }
  httplib::Headers headers;
  if (as != "anonymous") headers.emplace("Authorization", "Bearer " + keys.at(as));
  for (const auto& [name, value] : Member(step, "headers", kNoMembers).items()) {
    headers.emplace(name, Substitute(value.get<std::string>(), *captures));
  }
  std::string body;
  std::string content_type = "application/json";
  if (step.contains("body")) body = SubstituteJson(step["body"], *captures).dump();
  if (step.contains("raw_body")) body = Substitute(step["raw_body"].get<std::string>(), *captures);
  if (step.contains("content_type")) content_type = step["content_type"].get<std::string>();
  const Reply reply = Send(client, method, path, headers, body, content_type);
  if (reply.status == 0) failures->push_back(label + ": no answer");
  Check(Member(step, "expect", kNoMembers), reply, label, failures);
  if (step.contains("capture")) Capture(step["capture"], reply, label, captures, failures);
  return true;
}

}  // namespace

json LoadCase(const std::filesystem::path& path, std::string* error) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxCaseBytes) {
    *error = path.string() + ": unreadable or larger than 1 MiB";
    return nullptr;
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  json parsed = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || !parsed.value("steps", json()).is_array()) {
    *error = path.string() + ": not a case object with a \"steps\" array";
    return nullptr;
  }
  return parsed;
}

std::vector<std::string> RunCase(const json& test_case, httplib::Client& client, const std::string& admin_key,
                                 std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> failures;
  std::map<std::string, std::string> keys = {{"admin", admin_key}};
  try {
    for (const json& p : Member(test_case, "principals", kNoItems)) {
      const std::string body =
          json{{"name", p.at("name")}, {"role", p.at("role")}, {"namespaces", p.at("namespaces")}}.dump();
      httplib::Headers auth = {{"Authorization", "Bearer " + admin_key}};
      auto created = client.Post("/v1/admin/principals", auth, body, "application/json");
      json answer = created ? json::parse(created->body, nullptr, false) : json();
      if (!created || created->status != 201 || !answer.contains("api_key")) {
        failures.push_back("creating principal " + p.dump() + " failed");
        return failures;
      }
      keys[p.at("name").get<std::string>()] = answer["api_key"];
    }
    const json& steps = test_case["steps"];
    if (steps.size() > kMaxSteps) return {"more than 500 steps"};
    Captures captures;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (std::chrono::steady_clock::now() > deadline) {
        failures.push_back("deadline passed before step " + std::to_string(i));
        break;
      }
      if (!RunStep(steps[i], i, client, keys, &captures, &failures)) break;
    }
  } catch (const json::exception& e) {
    failures.push_back(std::string("malformed case: ") + e.what());
  }
  return failures;
}

}  // namespace bulwark::testing
