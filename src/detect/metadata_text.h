// The text an entry's metadata shows a reader: its string values (nested ones too), one per line,
// in document order. The write gate screens it like the entry's text (WriteDefenses::Screen), so an
// instruction cannot hide in a metadata field that a responder or an agent later reads.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace bulwark {

// Keys are included as "key: value" so that an injection split across a key and its value is seen
// whole. Empty for metadata without strings.
std::string MetadataText(const nlohmann::json& metadata);

}  // namespace bulwark
