// Wraps the generated IDF array (idf_table.inc) in a hash index built on first use.
#include "embed/idf_table.h"

#include <absl/container/flat_hash_map.h>

#include "embed/string_view_hash.h"

namespace bulwark {
namespace {

struct IdfEntry {
  const char* word;
  float idf;
};

#include "embed/idf_table.inc"

const absl::flat_hash_map<std::string_view, float, StringViewHash, StringViewEq>& IdfIndex() {
  // Built once, thread-safely (function-local static); never destroyed.
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<std::string_view, float, StringViewHash, StringViewEq>();
    map->reserve(std::size(kIdfEntries));
    for (const IdfEntry& e : kIdfEntries) map->emplace(e.word, e.idf);
    return map;
  }();
  return *index;
}

}  // namespace

float IdfLookup(std::string_view word) { return IdfFind(word).value_or(kIdfUnknown); }

std::optional<float> IdfFind(std::string_view word) {
  const auto& index = IdfIndex();
  auto it = index.find(word);
  if (it == index.end()) return std::nullopt;
  return it->second;
}

float IdfUnknown() { return kIdfUnknown; }

int IdfTableSize() { return static_cast<int>(std::size(kIdfEntries)); }

}  // namespace bulwark
