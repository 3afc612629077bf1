// Reading WordNet's database files (data.*, index.*) as untrusted bytes: the whole file under a
// size bound, its space-separated fields, and its integers (decimal offsets, hexadecimal word
// counts) with every character checked. Shared by the WordNet concept and gloss tables.
#ifndef BULWARK_EMBED_WORDNET_FILES_H_
#define BULWARK_EMBED_WORDNET_FILES_H_

#include <absl/status/statusor.h>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace bulwark {

// The whole file. NotFound if it cannot be stat'ed, ResourceExhausted if it is over `max_bytes`
// (nothing is allocated then), DataLoss on a short read.
[[nodiscard]] absl::StatusOr<std::string> ReadWordNetFile(const std::filesystem::path& path,
                                                          uint64_t max_bytes);

// The line's space-separated fields (runs of spaces separate; no empty fields).
std::vector<std::string_view> WordNetFields(std::string_view line);

// Parses all of `s` as an integer in `base`: false if it is empty, has another character or
// overflows `Int` (then *out is unspecified).
template <typename Int>
bool ParseWordNetInt(std::string_view s, Int* out, int base = 10) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace bulwark

#endif  // BULWARK_EMBED_WORDNET_FILES_H_
