// Internal to the SQLite backend: how a history event row is read (sqlite_backend.cc and
// sqlite_backend_chain.cc share it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "bulwark/entry.h"
#include "storage/sqlite/sqlite_util.h"

namespace bulwark::sqlite_rows {

// The columns DecodeEvent reads, in order.
inline constexpr char kEventColumns[] = "seq, entry_id, namespace, event, actor, at_us, detail, key_id, tag";

// Decodes kEventColumns (columns 0..8). Never fails: a detail that is not a JSON object becomes
// {"corrupt": true} and an out-of-range key id 0 (neither ever verifies).
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
  const int64_t key_id = st.Int(7);
  ev.key_id = key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0;
  ev.tag = st.Blob(8);
  return ev;
}

}  // namespace bulwark::sqlite_rows
