// VersionToken (see the header).
#include "replication/version_token.h"

#include <absl/status/status.h>
#include <absl/strings/ascii.h>
#include <absl/strings/escaping.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <vector>

#include "core/strings.h"

namespace bulwark {
namespace {

constexpr absl::string_view kPrefix = "bw1";
constexpr size_t kMaxNamespaceBytes = 256;
constexpr size_t kMaxVersionDigits = 19;

absl::Status Bad(std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("malformed version token: ", ToAbsl(why)));
}

bool AllDigits(absl::string_view s) {
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return !s.empty();
}

}  // namespace

std::string VersionToken::Encode() const {
  return absl::StrCat(kPrefix, ".", absl::WebSafeBase64Escape(name_space), ".", version);
}

absl::StatusOr<VersionToken> VersionToken::Decode(std::string_view text) {
  if (text.size() > kMaxVersionTokenBytes) return Bad("too long");
  const std::vector<absl::string_view> parts =
      absl::StrSplit(absl::string_view(text.data(), text.size()), '.');
  if (parts.size() != 3) return Bad("expected three dot-separated parts");
  if (parts[0] != kPrefix) return Bad("unknown format (expected bw1)");
  VersionToken token;
  if (parts[1].empty() || !absl::WebSafeBase64Unescape(parts[1], &token.name_space)) {
    return Bad("the namespace is not base64url");
  }
  if (token.name_space.empty() || token.name_space.size() > kMaxNamespaceBytes) {
    return Bad("the namespace must be 1..256 bytes");
  }
  if (parts[2].size() > kMaxVersionDigits || !AllDigits(parts[2])) return Bad("the version is not a number");
  if (!absl::SimpleAtoi(parts[2], &token.version) || token.version < 1)
    return Bad("the version is out of range");
  return token;
}

}  // namespace bulwark
