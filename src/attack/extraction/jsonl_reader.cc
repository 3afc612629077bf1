// Bounded JSON-lines reading (see jsonl_reader.h).
#include "attack/extraction/jsonl_reader.h"

#include <absl/strings/str_cat.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark::extraction {

absl::Status ForEachJsonLine(std::istream& in, std::string_view name,
                             const std::function<absl::Status(int, const nlohmann::json&)>& visit) {
  std::vector<char> buffer(kMaxJsonLineBytes + 2);
  for (int line_no = 1;; ++line_no) {
    in.getline(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const std::streamsize got = in.gcount();
    if (in.fail() && !in.eof() && got == static_cast<std::streamsize>(buffer.size()) - 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(ToAbsl(name), ":", line_no, ": line longer than ", kMaxJsonLineBytes, " bytes"));
    }
    if (got == 0 && in.eof()) return absl::OkStatus();
    std::string_view line(buffer.data(), static_cast<size_t>(got > 0 && !in.eof() ? got - 1 : got));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) {
      nlohmann::json object = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!object.is_object()) {
        return absl::InvalidArgumentError(absl::StrCat(ToAbsl(name), ":", line_no, ": not a JSON object"));
      }
      if (absl::Status s = visit(line_no, object); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(ToAbsl(name), ":", line_no, ": ", s.message()));
      }
    }
    if (in.eof()) return absl::OkStatus();
    if (in.fail()) return absl::DataLossError(absl::StrCat(ToAbsl(name), ": read error"));
  }
}

absl::StatusOr<std::ifstream> OpenJsonFile(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  if (size > kMaxJsonFileBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(path, " is larger than ", kMaxJsonFileBytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  return in;
}

absl::Status ForEachJsonLineInFile(const std::string& path,
                                   const std::function<absl::Status(int, const nlohmann::json&)>& visit) {
  BULWARK_ASSIGN_OR_RETURN(std::ifstream in, OpenJsonFile(path));
  return ForEachJsonLine(in, path, visit);
}

}  // namespace bulwark::extraction
