// JsonWriter (see json_writer.h).
#include "core/json_writer.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>

#include "core/text_validation.h"

namespace bulwark {
namespace {

// nlohmann's dump with the service's settings: compact, UTF-8 kept, invalid UTF-8 replaced.
std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void JsonWriter::Open(char bracket) {
  BeforeValue();
  out_->push_back(bracket);
  has_members_.push_back(false);
}

void JsonWriter::Close(char bracket) {
  if (!has_members_.empty()) has_members_.pop_back();
  out_->push_back(bracket);
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (has_members_.empty()) return;
  if (has_members_.back()) out_->push_back(',');
  has_members_.back() = true;
}

void JsonWriter::Key(std::string_view key) {
  String(key);
  out_->push_back(':');
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  // Most strings are printable ASCII with nothing to escape: copied in one piece.
  const bool plain_ascii = std::all_of(value.begin(), value.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
  });
  if (plain_ascii) {
    out_->push_back('"');
    out_->append(value);
    out_->push_back('"');
    return;
  }
  if (!IsValidUtf8(value)) {
    out_->append(Dump(nlohmann::json(std::string(value))));
    return;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  out_->push_back('"');
  size_t plain = 0;  // start of the run of bytes copied as they are
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_->append(value.data() + plain, i - plain);
    plain = i + 1;
    switch (c) {
      case '"':
        out_->append("\\\"");
        break;
      case '\\':
        out_->append("\\\\");
        break;
      case '\b':
        out_->append("\\b");
        break;
      case '\f':
        out_->append("\\f");
        break;
      case '\n':
        out_->append("\\n");
        break;
      case '\r':
        out_->append("\\r");
        break;
      case '\t':
        out_->append("\\t");
        break;
      default:
        out_->append("\\u00");
        out_->push_back(kHex[c >> 4]);
        out_->push_back(kHex[c & 0xf]);
    }
  }
  out_->append(value.data() + plain, value.size() - plain);
  out_->push_back('"');
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  absl::StrAppend(out_, value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  absl::StrAppend(out_, value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_->append("null");
    return;
  }
  // The function nlohmann's dump formats doubles with (Grisu2, shortest round trip, ".0" added to
  // integral values); the test compares the two.
  char buffer[64];
  const char* end = nlohmann::detail::to_chars(buffer, buffer + sizeof(buffer), value);
  out_->append(buffer, static_cast<size_t>(end - buffer));
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_->append(value ? "true" : "false");
}

void JsonWriter::Json(const nlohmann::json& value) {
  BeforeValue();
  out_->append(Dump(value));
}

}  // namespace bulwark
