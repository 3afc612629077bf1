// See wordnet_files.h.
#include "embed/wordnet_files.h"

#include <absl/strings/str_cat.h>

#include <fstream>

namespace bulwark {

absl::StatusOr<std::string> ReadWordNetFile(const std::filesystem::path& path, uint64_t max_bytes) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat("cannot stat ", path.string(), ": ", ec.message()));
  if (size > max_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat(path.string(), " is over ", max_bytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string data(size, '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  if (!in || static_cast<uint64_t>(in.gcount()) != size) {
    return absl::DataLossError(absl::StrCat("short read from ", path.string()));
  }
  return data;
}

std::vector<std::string_view> WordNetFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

std::optional<WordNetIndexLine> ParseWordNetIndexLine(std::string_view line) {
  WordNetIndexLine parsed;
  parsed.fields = WordNetFields(line);
  const std::vector<std::string_view>& f = parsed.fields;
  uint32_t synset_count = 0, pointer_count = 0;
  if (f.size() < 4 || !ParseWordNetInt(f[2], &synset_count) || !ParseWordNetInt(f[3], &pointer_count) ||
      f.size() != 6 + static_cast<size_t>(pointer_count) + synset_count) {
    return std::nullopt;
  }
  parsed.first_offset = f.size() - synset_count;
  return parsed;
}

}  // namespace bulwark
