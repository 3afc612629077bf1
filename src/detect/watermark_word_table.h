// The watermark's built-in word groups as data: data/watermark/word_groups.tsv, compiled into the
// binary at build time (src/detect/CMakeLists.txt generates watermark_word_table_data.h from it),
// parsed once when WatermarkLexicon::Default() is first used. The file's header comment gives the
// format; watermark_lexicon.h says what a group is.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

// One word group: variants that mean the same in any sentence the others fit.
struct WordGroupSpec {
  uint8_t preference = 0;          // 0..3, VariantGroup::preference
  std::vector<std::string> forms;  // 2 to 7 variants, the first as displayed
  // Only before a word other than "been", "got", "gotten" or "had": "it's" may be "it has" there,
  // and "as it is." cannot contract.
  bool before_word = false;
};

// The TSV text of data/watermark/word_groups.tsv as it was at build time.
std::string_view DefaultWordGroupTable();

// Parses a word-group table. InvalidArgument naming the line when a line does not have a
// preference 0..3, a context of "-" or "before_word" and 2 to 7 non-empty variants, or when no
// group is given. (Forms in two groups are refused by WatermarkLexicon, which indexes them.)
[[nodiscard]] absl::StatusOr<std::vector<WordGroupSpec>> ParseWordGroupTable(std::string_view tsv);

}  // namespace bulwark
