// Internal to the SQLite backend: how a history event row is written and read (sqlite_backend.cc
// and sqlite_backend_chain.cc share it).
//
// Detail references (schema version 6, doc/store_format.md "history"): an add or update event's
// detail repeats what was written -- the entry's text and metadata, and its source and state. While
// a member is still the entry row's, the event row stores the detail without it, one bit of
// detail_ref per member left out (kRefMembers); reading the event puts the row's values back in, so
// the event (and what its tag covers, doc/entry_format.md) is exactly what was signed. Before a
// write changes any of them, the events that refer to the row get their own copies
// (SqliteBackend::DetachEventsLocked). A reference to a row that is gone or was edited reads back as
// a detail that fails its tag, like any edit.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "bulwark/entry.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark::sqlite_rows {

// The members an event may leave to its entry's row, with their bits in detail_ref and the
// column of kEventColumns that reads the row's value.
struct RefMember {
  const char* name;
  int64_t bit;
  int column;
};
inline constexpr RefMember kRefMembers[] = {
    {"text", 1, 10}, {"metadata", 2, 11}, {"source", 4, 12}, {"state", 8, 13}};

// The columns DecodeEvent reads, in order; a SELECT using them reads FROM history (unaliased).
// Column 9 is detail_ref, 10 .. 13 the referred row's text, metadata, source and state (NULL
// without a reference).
#define BULWARK_REF_COLUMN(column)                           \
  "CASE WHEN history.detail_ref != 0 THEN (SELECT r." column \
  " FROM entries r WHERE r.id = history.entry_id AND r.namespace = history.namespace) END"
inline constexpr char kEventColumns[] =
    "seq, entry_id, namespace, event, actor, at_us, detail, key_id, tag, "
    "detail_ref, " BULWARK_REF_COLUMN("text") ", " BULWARK_REF_COLUMN("metadata") ", " BULWARK_REF_COLUMN(
        "source") ", " BULWARK_REF_COLUMN("state");
#undef BULWARK_REF_COLUMN
inline constexpr int kEventColumnCount = 14;

// The members of `event`'s detail that hold exactly what `entry` (the row written in the same
// transaction) holds, as detail_ref bits; 0 unless the event is about `entry` and its detail holds
// the entry's text and metadata (an add's or an update's).
inline int64_t DetailRefBits(const HistoryEvent& event, const Entry& entry) {
  if (event.entry_id != entry.id || event.name_space != entry.name_space) return 0;
  const nlohmann::json& d = event.detail;
  const auto text = d.find("text");
  const auto metadata = d.find("metadata");
  if (text == d.end() || !text->is_string() || text->get_ref<const std::string&>() != entry.text ||
      metadata == d.end() || *metadata != entry.metadata) {
    return 0;
  }
  int64_t bits = 1 | 2;
  const auto source = d.find("source");
  if (source != d.end() && source->is_string() &&
      source->get_ref<const std::string&>() == ToString(entry.source))
    bits |= 4;
  const auto state = d.find("state");
  if (state != d.end() && state->is_string() && state->get_ref<const std::string&>() == ToString(entry.state))
    bits |= 8;
  return bits;
}

// The detail as stored: without the members named by `bits`.
inline std::string StoredDetail(const HistoryEvent& event, int64_t bits) {
  if (bits == 0) return event.detail.dump();
  // The other members only: the referred ones (an add's text and metadata) are not copied.
  nlohmann::json rest(nlohmann::json::value_t::object);
  for (const auto& [name, value] : event.detail.items()) {
    bool referred = false;
    for (const RefMember& m : kRefMembers) referred = referred || ((bits & m.bit) && name == m.name);
    if (!referred) rest[name] = value;
  }
  return rest.dump();
}

// Decodes kEventColumns (columns 0 .. 13). Never fails: a detail that is not a JSON object becomes
// {"corrupt": true} and an out-of-range key id 0 (neither ever verifies); a referred member whose
// row is gone stays out of the detail, and a row's metadata that does not parse goes in as its text.
inline HistoryEvent DecodeEvent(const Statement& st) {
  HistoryEvent ev;
  ev.seq = st.Int(0);
  ev.entry_id = st.Text(1);
  ev.name_space = st.Text(2);
  ev.event = st.Text(3);
  ev.actor = st.Text(4);
  ev.at_us = st.Int(5);
  ev.detail = nlohmann::json::parse(st.TextView(6), nullptr, /*allow_exceptions=*/false);
  if (!ev.detail.is_object()) ev.detail = nlohmann::json{{"corrupt", true}};
  const int64_t bits = st.Int(9);
  for (const RefMember& m : kRefMembers) {
    if (!(bits & m.bit) || st.IsNull(m.column)) continue;
    if (m.bit == 2) {
      nlohmann::json metadata =
          nlohmann::json::parse(st.TextView(m.column), nullptr, /*allow_exceptions=*/false);
      ev.detail[m.name] = metadata.is_discarded() ? nlohmann::json(st.Text(m.column)) : std::move(metadata);
    } else {
      ev.detail[m.name] = st.Text(m.column);
    }
  }
  const int64_t key_id = st.Int(7);
  ev.key_id = key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0;
  ev.tag = st.Blob(8);
  return ev;
}

}  // namespace bulwark::sqlite_rows
