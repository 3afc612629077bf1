// Transparent hash and equality for hash maps keyed by std::string and looked up with
// std::string_view. Needed because Debian's Abseil build has its own absl::string_view type, so
// absl's default string hasher does not accept a std::string_view.
#pragma once

#include <cstddef>
#include <string_view>

// Inline XXH3 (static functions in each translation unit): the map lookups sit on the lexical
// embedder's hot path, and a call through the shared library costs more than hashing a word.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace bulwark {

struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return XXH3_64bits(s.data(), s.size()); }
};

struct StringViewEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

}  // namespace bulwark
