// Identifier tokens of answers (see answer_identifiers.h).
#include "smoothing/answer_identifiers.h"

#include <absl/strings/ascii.h>
#include <absl/strings/str_split.h>

#include <algorithm>

#include "core/strings.h"

namespace bulwark {
namespace {

bool IsEdgePunctuation(char c) {
  return std::string_view(".,;:!?()[]{}<>\"'`*").find(c) != std::string_view::npos;
}

// Dot-separated labels of letters, digits and hyphens; the first and the last of two or more
// characters ("evil.example", "mail.corp.com"; not "e.g").
bool IsHostName(std::string_view token) {
  if (token.find('.') == std::string_view::npos) return false;
  const std::vector<absl::string_view> labels = absl::StrSplit(ToAbsl(token), '.');
  for (absl::string_view label : labels) {
    if (label.empty()) return false;
    for (char c : label) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
    }
  }
  return labels.front().size() >= 2 && labels.back().size() >= 2;
}

}  // namespace

std::vector<std::string> IdentifierTokens(std::string_view answer) {
  std::vector<std::string> out;
  for (absl::string_view piece :
       absl::StrSplit(ToAbsl(answer), absl::ByAnyChar(" \t\n\r\f\v"), absl::SkipEmpty())) {
    std::string_view token = ToStd(piece);
    while (!token.empty() && IsEdgePunctuation(token.front())) token.remove_prefix(1);
    while (!token.empty() && IsEdgePunctuation(token.back())) token.remove_suffix(1);
    if (token.empty()) continue;
    const bool has_digit = std::any_of(token.begin(), token.end(), [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c));
    });
    if (!has_digit && token.find('@') == std::string_view::npos &&
        token.find("://") == std::string_view::npos && !IsHostName(token)) {
      continue;
    }
    std::string normalized = absl::AsciiStrToLower(std::string(token));
    const bool numeric = std::all_of(normalized.begin(), normalized.end(), [](char c) {
      return absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == ',' || c == '.';
    });
    if (numeric) normalized.erase(std::remove(normalized.begin(), normalized.end(), ','), normalized.end());
    out.push_back(std::move(normalized));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool IdentifiersConflict(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() || b.empty()) return false;
  // Both sorted: a merge finds a shared token.
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) return false;
    (a[i] < b[j]) ? ++i : ++j;
  }
  return true;
}

}  // namespace bulwark
