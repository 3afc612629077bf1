// JsonWriter: appends compact JSON text to a string without building a nlohmann::json first.
//
// For the service's hottest answers (a search returns k entries): building the nlohmann object
// tree, dumping it and freeing it allocated a map node and a string per field and cost about an
// eighth of a search request's CPU. The writer produces exactly the bytes nlohmann's
// dump(-1, ' ', false, error_handler_t::replace) produces for the same value, provided the caller
// writes object keys in nlohmann's order (sorted, as std::map keeps them); a test holds it to that.
//
// Usage: BeginObject(); Key("a"); Int(1); Key("b"); BeginArray(); String("x"); EndArray();
// EndObject(). The writer adds the commas and colons; it does not check that calls nest properly.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

class JsonWriter {
 public:
  // Appends to `*out`, which must outlive the writer.
  explicit JsonWriter(std::string* out) : out_(out) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  // An object key; the next call writes its value.
  void Key(std::string_view key);

  // A string value: valid UTF-8 is copied with '"', '\\' and control characters escaped as
  // nlohmann escapes them; invalid UTF-8 is replaced by U+FFFD as nlohmann's `replace` does.
  void String(std::string_view value);
  void Int(int64_t value);
  void Uint(uint64_t value);
  void Double(double value);  // nlohmann's shortest round-trip form ("1.0", "0.25", "1e-05", null for NaN)
  void Bool(bool value);
  // Any value, dumped by nlohmann (for the small nested parts: metadata, reports, gate scores).
  void Json(const nlohmann::json& value);

 private:
  void Open(char bracket);
  void Close(char bracket);
  void BeforeValue();

  std::string* out_;
  std::vector<bool> has_members_;  // per open object or array: something was written in it
  bool after_key_ = false;
};

}  // namespace bulwark
