#include "cli/jsonl_import.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/status_macros.h"
#include "core/text_validation.h"

namespace bulwark::cli {
namespace {

absl::Status AtLine(size_t line, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", message));
}

absl::StatusOr<NewEntry> ParseLine(const std::string& line, const ImportLimits& limits) {
  nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  if (!object.is_object()) return absl::InvalidArgumentError("expected a JSON object");
  NewEntry entry;
  entry.source = Source::kImport;
  bool has_text = false;
  for (const auto& [key, value] : object.items()) {
    if (key == "text") {
      if (!value.is_string()) return absl::InvalidArgumentError("\"text\" must be a string");
      entry.text = value.get<std::string>();
      has_text = true;
    } else if (key == "metadata") {
      if (!value.is_object()) return absl::InvalidArgumentError("\"metadata\" must be an object");
      entry.metadata = value;
    } else if (key == "source") {
      auto source = value.is_string() ? ParseSource(value.get<std::string>()) : std::nullopt;
      if (!source) {
        return absl::InvalidArgumentError("\"source\" must be one of user, agent, tool, system, import");
      }
      entry.source = *source;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("unknown field \"", key, "\""));
    }
  }
  if (!has_text) return absl::InvalidArgumentError("missing \"text\"");
  BULWARK_RETURN_IF_ERROR(ValidateText(entry.text, limits.max_text_bytes));
  BULWARK_RETURN_IF_ERROR(ValidateMetadata(entry.metadata, limits.max_metadata_bytes));
  return entry;
}

}  // namespace

absl::StatusOr<std::vector<NewEntry>> ParseImportJsonl(std::istream& in, const ImportLimits& limits) {
  std::vector<NewEntry> entries;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.size() > limits.max_line_bytes) {
      return AtLine(number, absl::StrCat("line is longer than ", limits.max_line_bytes, " bytes"));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    auto entry = ParseLine(line, limits);
    if (!entry.ok()) return AtLine(number, entry.status().message());
    if (entries.size() == limits.max_entries) {
      return AtLine(number, absl::StrCat("more than ", limits.max_entries, " entries in one import"));
    }
    entries.push_back(*std::move(entry));
  }
  if (in.bad()) return absl::UnavailableError("read error");
  if (entries.empty()) return absl::InvalidArgumentError("no entries to import");
  return entries;
}

}  // namespace bulwark::cli
