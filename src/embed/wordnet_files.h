// Reading WordNet's database files (data.*, index.*) as untrusted bytes: the whole file under a
// size bound, its space-separated fields, and its integers (decimal offsets, hexadecimal word
// counts) with every character checked. Shared by the WordNet concept and gloss tables.
#ifndef BULWARK_EMBED_WORDNET_FILES_H_
#define BULWARK_EMBED_WORDNET_FILES_H_

#include <absl/status/statusor.h>

#include <charconv>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
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

// One line of an index.<pos> file:
//   lemma pos synset_cnt p_cnt [symbol]{p_cnt} sense_cnt tagsense_cnt offset{synset_cnt}
// Views into the line.
struct WordNetIndexLine {
  std::vector<std::string_view> fields;  // every field of the line; fields[0] is the lemma
  size_t first_offset = 0;               // index of the first synset offset in `fields`

  std::string_view lemma() const { return fields[0]; }
  // The synset offsets as text, most frequent sense first.
  std::span<const std::string_view> offsets() const { return std::span(fields).subspan(first_offset); }
};
// nullopt if the counts are not numbers or do not match the number of fields.
std::optional<WordNetIndexLine> ParseWordNetIndexLine(std::string_view line);

}  // namespace bulwark

#endif  // BULWARK_EMBED_WORDNET_FILES_H_
