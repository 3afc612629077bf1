// The input files of `bulwark-lab eval sessions` (see session_file.h).
#include "eval/experiments/session_file.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "core/status_macros.h"
#include "core/text_validation.h"

namespace bulwark::eval {
namespace {

using Json = nlohmann::json;

absl::Status LineError(size_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", what));
}

// Reads one line (without its '\n' and a trailing '\r'), keeping at most max_bytes + 1 bytes so
// an over-long line is detected without holding it. False at the end of the input.
bool ReadBoundedLine(std::istream& in, size_t max_bytes, std::string* line) {
  line->clear();
  std::streambuf* buf = in.rdbuf();
  if (buf == nullptr) return false;
  int c = buf->sbumpc();
  if (c == std::char_traits<char>::eof()) return false;
  while (c != std::char_traits<char>::eof() && c != '\n') {
    if (line->size() <= max_bytes) line->push_back(static_cast<char>(c));
    c = buf->sbumpc();
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

bool IsBlank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

// A session id or style: a non-empty string of at most max_bytes valid UTF-8 bytes.
absl::Status CheckName(const Json& value, absl::string_view field, size_t max_bytes) {
  if (!value.is_string()) return absl::InvalidArgumentError(absl::StrCat("\"", field, "\" must be a string"));
  const std::string& s = value.get_ref<const std::string&>();
  if (s.empty() || s.size() > max_bytes || !IsValidUtf8(s)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", field, "\" must be 1 to ", max_bytes, " bytes of UTF-8"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseQueries(const Json& j, const SessionLimits& limits) {
  if (!j.contains("queries") || !j["queries"].is_array()) {
    return absl::InvalidArgumentError("\"queries\" must be an array of strings");
  }
  const Json& queries = j["queries"];
  if (queries.empty()) return absl::InvalidArgumentError("\"queries\" is empty");
  if (queries.size() > limits.max_queries_per_session) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than ", limits.max_queries_per_session, " queries in one session"));
  }
  std::vector<std::string> out;
  out.reserve(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    if (!queries[i].is_string())
      return absl::InvalidArgumentError(absl::StrCat("query ", i + 1, " is not a string"));
    const std::string& q = queries[i].get_ref<const std::string&>();
    if (auto s = ValidateText(q, limits.max_query_bytes); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("query ", i + 1, ": ", s.message()));
    }
    out.push_back(q);
  }
  return out;
}

absl::StatusOr<LabelledSession> ParseSessionObject(const Json& j, const SessionLimits& limits) {
  if (!j.is_object()) return absl::InvalidArgumentError("not a JSON object");
  LabelledSession s;
  if (!j.contains("session")) return absl::InvalidArgumentError("missing \"session\"");
  BULWARK_RETURN_IF_ERROR(CheckName(j["session"], "session", limits.max_name_bytes));
  s.session = j["session"].get<std::string>();
  if (!j.contains("label") || !j["label"].is_string()) {
    return absl::InvalidArgumentError("\"label\" must be \"benign\" or \"attack\"");
  }
  const std::string& label = j["label"].get_ref<const std::string&>();
  if (label == "benign") {
    s.label = SessionLabel::kBenign;
  } else if (label == "attack") {
    s.label = SessionLabel::kAttack;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown label \"", label.substr(0, 64), "\" (expected \"benign\" or \"attack\")"));
  }
  if (j.contains("style")) {
    BULWARK_RETURN_IF_ERROR(CheckName(j["style"], "style", limits.max_name_bytes));
    s.style = j["style"].get<std::string>();
  }
  BULWARK_ASSIGN_OR_RETURN(auto queries, ParseQueries(j, limits));
  s.queries = std::move(queries);
  return s;
}

}  // namespace

std::string_view ToString(SessionLabel label) { return label == SessionLabel::kAttack ? "attack" : "benign"; }

absl::StatusOr<std::vector<LabelledSession>> ParseSessionFile(std::istream& in, const SessionLimits& limits) {
  std::vector<LabelledSession> sessions;
  absl::flat_hash_map<std::string, size_t> first_line;  // session id -> its line
  size_t total_queries = 0;
  std::string line;
  for (size_t number = 1; ReadBoundedLine(in, limits.max_line_bytes, &line); ++number) {
    if (line.size() > limits.max_line_bytes) {
      return LineError(number, absl::StrCat("longer than ", limits.max_line_bytes, " bytes"));
    }
    if (IsBlank(line)) continue;
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return LineError(number, "not valid JSON");
    auto session = ParseSessionObject(j, limits);
    if (!session.ok()) return LineError(number, session.status().message());
    if (auto [it, inserted] = first_line.emplace(session->session, number); !inserted) {
      return LineError(
          number, absl::StrCat("session \"", session->session, "\" already appears on line ", it->second));
    }
    if (sessions.size() >= limits.max_sessions) {
      return LineError(number, absl::StrCat("more than ", limits.max_sessions, " sessions"));
    }
    total_queries += session->queries.size();
    if (total_queries > limits.max_total_queries) {
      return LineError(number, absl::StrCat("more than ", limits.max_total_queries, " queries in the file"));
    }
    session->line = number;
    sessions.push_back(*std::move(session));
  }
  if (sessions.empty()) return absl::InvalidArgumentError("no session in the file");
  return sessions;
}

absl::StatusOr<std::vector<NewEntry>> ParseMemoryFile(std::istream& in, const MemoryLimits& limits) {
  std::vector<NewEntry> memories;
  std::string line;
  for (size_t number = 1; ReadBoundedLine(in, limits.max_line_bytes, &line); ++number) {
    if (line.size() > limits.max_line_bytes) {
      return LineError(number, absl::StrCat("longer than ", limits.max_line_bytes, " bytes"));
    }
    if (IsBlank(line)) continue;
    NewEntry entry;
    entry.source = Source::kImport;
    if (line.front() == '{') {
      const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) return LineError(number, "not a JSON object");
      if (!j.contains("text") || !j["text"].is_string())
        return LineError(number, "\"text\" must be a string");
      entry.text = j["text"].get<std::string>();
      if (j.contains("metadata")) {
        if (!j["metadata"].is_object()) return LineError(number, "\"metadata\" must be an object");
        entry.metadata = j["metadata"];
      }
    } else {
      entry.text = line;
    }
    if (auto s = ValidateText(entry.text, limits.max_text_bytes); !s.ok())
      return LineError(number, s.message());
    if (auto s = ValidateMetadata(entry.metadata, limits.max_metadata_bytes); !s.ok()) {
      return LineError(number, s.message());
    }
    if (memories.size() >= limits.max_memories) {
      return LineError(number, absl::StrCat("more than ", limits.max_memories, " memories"));
    }
    memories.push_back(std::move(entry));
  }
  if (memories.empty()) return absl::InvalidArgumentError("no memory in the file");
  return memories;
}

}  // namespace bulwark::eval
