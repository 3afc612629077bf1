#include "core/text_validation.h"

#include <absl/strings/str_cat.h>

namespace bulwark {

bool IsValidUtf8(std::string_view text, size_t* bad_offset) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  auto fail = [&](size_t at) {
    if (bad_offset) *bad_offset = at;
    return false;
  };
  while (i < n) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return fail(i);
    }
    if (i + len > n) return fail(i);
    for (size_t j = 1; j < len; ++j) {
      if ((s[i + j] & 0xC0) != 0x80) return fail(i);
      cp = (cp << 6) | (s[i + j] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return fail(i);
    }
    i += len;
  }
  return true;
}

absl::Status ValidateText(std::string_view text, size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("text is ", text.size(), " bytes; the limit is ", max_bytes, " bytes"));
  }
  size_t bad = 0;
  if (!IsValidUtf8(text, &bad)) {
    return absl::InvalidArgumentError(absl::StrCat("text is not valid UTF-8 (bad byte at offset ", bad, ")"));
  }
  if (text.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("text contains a NUL character");
  }
  if (text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos) {
    return absl::InvalidArgumentError("text is empty");
  }
  return absl::OkStatus();
}

absl::Status ValidateNamespace(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  };
  if (name.empty() || name.size() > 64) {
    return absl::InvalidArgumentError("namespace must be 1 to 64 characters");
  }
  if (name[0] == '_' || name[0] == '.' || name[0] == '-') {
    return absl::InvalidArgumentError("namespace must start with a letter or digit");
  }
  for (char c : name) {
    if (!allowed(c)) {
      return absl::InvalidArgumentError("namespace may contain only letters, digits, '_', '.' and '-'");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateMetadata(const nlohmann::json& metadata, size_t max_bytes) {
  if (!metadata.is_object()) {
    return absl::InvalidArgumentError("metadata must be a JSON object");
  }
  std::string dumped;
  try {
    dumped = metadata.dump();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("metadata is not valid: ", e.what()));
  }
  if (dumped.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("metadata is ", dumped.size(), " bytes; the limit is ", max_bytes, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace bulwark
