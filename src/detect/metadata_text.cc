#include "detect/metadata_text.h"

namespace bulwark {
namespace {

void Append(const nlohmann::json& value, const std::string& key, std::string* out) {
  if (value.is_string()) {
    if (!out->empty()) out->push_back('\n');
    if (!key.empty()) out->append(key).append(": ");
    out->append(value.get_ref<const std::string&>());
  } else if (value.is_object()) {
    for (const auto& [k, v] : value.items()) Append(v, k, out);
  } else if (value.is_array()) {
    for (const auto& v : value) Append(v, key, out);
  }
}

}  // namespace

std::string MetadataText(const nlohmann::json& metadata) {
  std::string out;
  Append(metadata, "", &out);
  return out;
}

}  // namespace bulwark
