// libFuzzer target for the Aiksaurus thesaurus parser (src/embed/thesaurus.h). An input is
// split into the two files: its first two bytes give the length L (big-endian) of words.dat, the
// next L bytes are words.dat and the rest meanings.dat. Parse must either refuse the pair with
// DataLoss or yield a thesaurus whose every word reaches only existing terms (the lookups read
// inside the tables: ASan checks) -- anything else aborts. The seed corpus (fuzz/corpus/thesaurus/)
// holds a small well-formed pair in that framing.
//
//   scripts/fuzz [SECONDS]      builds build-fuzz/ with clang and runs every target
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "embed/thesaurus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t words_size = std::min<size_t>((size_t{data[0]} << 8) | data[1], size - 2);
  const std::string_view input(reinterpret_cast<const char*>(data) + 2, size - 2);
  const auto parsed = bulwark::Thesaurus::Parse(input.substr(0, words_size), input.substr(words_size));
  if (!parsed.ok()) {
    if (parsed.status().code() != absl::StatusCode::kDataLoss) std::abort();
    return 0;
  }
  const bulwark::Thesaurus& t = **parsed;
  for (size_t id = 0; id < t.term_count(); ++id) {
    const std::string_view word = t.term(static_cast<uint32_t>(id));
    if (word.empty()) std::abort();
    t.ForEachMember(word, [&](uint32_t other) {
      if (other >= t.term_count() || t.term(other) == word) std::abort();
    });
    t.ForEachHead(word, [&](uint32_t other) {
      if (other >= t.term_count()) std::abort();
    });
  }
  return 0;
}
