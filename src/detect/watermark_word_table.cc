// Parsing the watermark's word-group table (see watermark_word_table.h).
#include "detect/watermark_word_table.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include "detect/watermark_word_table_data.h"

namespace bulwark {

std::string_view DefaultWordGroupTable() { return kWatermarkWordGroups; }

absl::StatusOr<std::vector<WordGroupSpec>> ParseWordGroupTable(std::string_view tsv) {
  std::vector<WordGroupSpec> groups;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(tsv.data(), tsv.size()), '\n')) {
    ++line_number;
    if (line.empty() || line.front() == '#') continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat("word group table line ", line_number, ": ", why));
    };
    const std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    if (fields.size() < 4 || fields.size() > 9) return bad("want preference, context and 2 to 7 variants");
    if (fields[0].size() != 1 || fields[0][0] < '0' || fields[0][0] > '3')
      return bad("preference must be 0..3");
    if (fields[1] != "-" && fields[1] != "before_word")
      return bad("context must be \"-\" or \"before_word\"");
    WordGroupSpec& group = groups.emplace_back();
    group.preference = static_cast<uint8_t>(fields[0][0] - '0');
    group.before_word = fields[1] == "before_word";
    for (size_t i = 2; i < fields.size(); ++i) {
      if (fields[i].empty()) return bad("empty variant");
      group.forms.emplace_back(fields[i]);
    }
  }
  if (groups.empty()) return absl::InvalidArgumentError("word group table has no groups");
  return groups;
}

}  // namespace bulwark
