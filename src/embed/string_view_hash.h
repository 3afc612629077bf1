// Transparent hash and equality for hash maps keyed by std::string and looked up with
// std::string_view. Needed because Debian's Abseil build has its own absl::string_view type, so
// absl's default string hasher does not accept a std::string_view.
#pragma once

#include <cstddef>
#include <string_view>

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
