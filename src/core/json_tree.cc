// WriteJsonTree: see json_tree.h.
#include "core/json_tree.h"

#include <cstdint>
#include <string>

#include "core/text_validation.h"

namespace bulwark {

bool WriteJsonTree(JsonWriter& w, const nlohmann::json& value, InvalidJsonText invalid) {
  using Type = nlohmann::json::value_t;
  const bool refuse = invalid == InvalidJsonText::kRefuse;
  switch (value.type()) {
    case Type::object:
      w.BeginObject();
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (refuse && !IsValidUtf8(it.key())) return false;
        w.Key(it.key());
        if (!WriteJsonTree(w, it.value(), invalid)) return false;
      }
      w.EndObject();
      return true;
    case Type::array:
      w.BeginArray();
      for (const nlohmann::json& element : value) {
        if (!WriteJsonTree(w, element, invalid)) return false;
      }
      w.EndArray();
      return true;
    case Type::string: {
      const std::string& text = value.get_ref<const std::string&>();
      if (refuse && !IsValidUtf8(text)) return false;
      w.String(text);
      return true;
    }
    case Type::number_integer:
      w.Int(value.get<int64_t>());
      return true;
    case Type::number_unsigned:
      w.Uint(value.get<uint64_t>());
      return true;
    case Type::number_float:
      w.Double(value.get<double>());
      return true;
    case Type::boolean:
      w.Bool(value.get<bool>());
      return true;
    case Type::binary:
    case Type::discarded:
      if (refuse) return false;
      w.Json(value);
      return true;
    default:  // null
      w.Json(value);
      return true;
  }
}

}  // namespace bulwark
