// WriteJsonTree: a nlohmann::json value written member by member through a JsonWriter, so its
// bytes are those of JsonWriter::Json(value) (nlohmann's dump, json_writer.h) without a dump
// string per member. For the JSON trees inside hot answers and signed encodings: entry metadata,
// write-gate reports, history event details.
#pragma once

#include <nlohmann/json.hpp>

#include "core/json_writer.h"

namespace bulwark {

// What to do with a key or string that is not valid UTF-8, and with a binary or discarded node.
enum class InvalidJsonText {
  kReplace,  // as JsonWriter does: U+FFFD for invalid bytes, nlohmann's own bytes for the nodes
  kRefuse,   // stop: dump() without `replace` throws there
};

// Writes `value` into `w`. Returns true when all of it was written; false only under kRefuse, at
// the first key or string that is not valid UTF-8 or binary or discarded node, with `w` partly
// written (the caller discards its output).
bool WriteJsonTree(JsonWriter& w, const nlohmann::json& value, InvalidJsonText invalid);

}  // namespace bulwark
