// Rows of the PostgreSQL backend (see postgres_rows.h); mirrors sqlite_backend.cc's DecodeRow.
#include "storage/postgresql/postgres_rows.h"

#include <absl/strings/str_cat.h>

#include <cstring>

#include "storage/stored_report.h"

namespace bulwark::pg {
namespace {

// A stored JSON column; discarded (not an object) if it does not parse.
nlohmann::json ParseStoredObject(std::string_view text) {
  if (text == "{}") return nlohmann::json::object();
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

}  // namespace

std::string EmbeddingBytes(const std::vector<float>& embedding) {
  std::string bytes(embedding.size() * sizeof(float), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), embedding.data(), bytes.size());  // little-endian host
  return bytes;
}

std::vector<PgParam> EntryParams(const Entry& e) {
  return {PgParam::Text(e.id),
          PgParam::Text(e.name_space),
          PgParam::Text(e.text),
          PgParam::Text(e.metadata.dump()),
          PgParam::Text(e.principal),
          PgParam::Text(ToString(e.source)),
          PgParam::Text(ToString(e.kind)),
          PgParam::Text(ToString(e.state)),
          PgParam::Int(e.created_at_us),
          PgParam::Int(e.updated_at_us),
          PgParam::Bytes(EmbeddingBytes(e.embedding)),
          PgParam::Int(static_cast<int64_t>(e.key_id)),
          PgParam::Bytes(e.tag),
          PgParam::Text(StoredReport(e.report).dump())};  // a passed write: its verdict only
}

std::vector<PgParam> EventParams(const HistoryEvent& ev, int64_t seq) {
  return {PgParam::Int(seq),
          PgParam::Text(ev.entry_id),
          PgParam::Text(ev.name_space),
          PgParam::Text(ev.event),
          PgParam::Text(ev.actor),
          PgParam::Int(ev.at_us),
          PgParam::Text(ev.detail.dump()),
          PgParam::Int(static_cast<int64_t>(ev.key_id)),
          PgParam::Bytes(ev.tag)};
}

StoredRow DecodeEntryRow(const PgResult& st, int r) {
  StoredRow row;
  row.row_id = st.Int(r, 0);
  Entry& e = row.entry;
  std::vector<std::string> problems;
  e.id = st.Bytes(r, 1);
  e.name_space = st.Bytes(r, 2);
  e.text = st.Bytes(r, 3);
  e.metadata = ParseStoredObject(st.View(r, 4));
  if (!e.metadata.is_object()) {
    problems.push_back("metadata is not a JSON object");
    e.metadata = nlohmann::json::object();
  }
  e.principal = st.Bytes(r, 5);
  auto source = ParseSource(st.Bytes(r, 6));
  auto kind = ParseKind(st.Bytes(r, 7));
  auto state = ParseState(st.Bytes(r, 8));
  if (!source) problems.push_back("unknown source");
  if (!kind) problems.push_back("unknown kind");
  if (!state) problems.push_back("unknown state");
  e.source = source.value_or(Source::kUser);
  e.kind = kind.value_or(Kind::kMemory);
  e.state = state.value_or(State::kQuarantined);
  e.created_at_us = st.Int(r, 9);
  e.updated_at_us = st.Int(r, 10);
  const std::string_view embedding = st.View(r, 11);
  if (embedding.size() % sizeof(float) != 0) {
    problems.push_back("embedding size is not a multiple of 4 bytes");
  } else {
    e.embedding.resize(embedding.size() / sizeof(float));
    if (!embedding.empty()) std::memcpy(e.embedding.data(), embedding.data(), embedding.size());
  }
  const int64_t key_id = st.Int(r, 12);
  if (key_id < 0 || key_id > UINT32_MAX) problems.push_back("key id out of range");
  e.key_id = static_cast<uint32_t>(key_id);
  e.tag = st.Bytes(r, 13);
  e.report = ParseStoredObject(st.View(r, 14));
  if (!e.report.is_object()) {
    problems.push_back("report is not a JSON object");
    e.report = nlohmann::json::object();
  }
  for (size_t i = 0; i < problems.size(); ++i) {
    absl::StrAppend(&row.decode_error, i ? "; " : "", problems[i]);
  }
  return row;
}

HistoryEvent DecodeEventRow(const PgResult& st, int r) {
  HistoryEvent ev;
  ev.seq = st.Int(r, 0);
  ev.entry_id = st.Bytes(r, 1);
  ev.name_space = st.Bytes(r, 2);
  ev.event = st.Bytes(r, 3);
  ev.actor = st.Bytes(r, 4);
  ev.at_us = st.Int(r, 5);
  ev.detail = nlohmann::json::parse(st.View(r, 6), nullptr, /*allow_exceptions=*/false);
  if (!ev.detail.is_object()) ev.detail = nlohmann::json{{"corrupt", true}};
  const int64_t key_id = st.Int(r, 7);
  ev.key_id = key_id >= 0 && key_id <= UINT32_MAX ? static_cast<uint32_t>(key_id) : 0;  // 0 never verifies
  ev.tag = st.Bytes(r, 8);
  return ev;
}

}  // namespace bulwark::pg
