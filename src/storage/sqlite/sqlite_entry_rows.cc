// The SQLite backend's entry row codec (see sqlite_entry_rows.h).
#include "storage/sqlite/sqlite_entry_rows.h"

#include <cstdint>
#include <cstring>

#include "storage/sqlite/vector_codec.h"
#include "storage/stored_report.h"

namespace bulwark::sqlite_rows {
namespace {

// A stored JSON column; discarded (not an object) if it does not parse. "{}", by far the most
// common metadata and report, skips the parser.
nlohmann::json ParseStoredObject(std::string_view text) {
  if (text == "{}") return nlohmann::json::object();
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// Adds one problem to a row's decode_error.
void AddProblem(StoredRow* row, std::string_view problem) {
  if (!row->decode_error.empty()) row->decode_error += "; ";
  row->decode_error += problem;
}

}  // namespace

std::string EmbeddingBytes(const std::vector<float>& embedding) {
  std::string bytes(embedding.size() * sizeof(float), '\0');
  if (!bytes.empty()) std::memcpy(bytes.data(), embedding.data(), bytes.size());  // little-endian host
  return bytes;
}

void BindEntry(Statement& st, const Entry& e) {
  st.Bind(1, e.id);
  st.Bind(2, e.name_space);
  st.Bind(3, e.text);
  st.Bind(4, e.metadata.dump());
  st.Bind(5, e.principal);
  st.Bind(6, ToString(e.source));
  st.Bind(7, ToString(e.kind));
  st.Bind(8, ToString(e.state));
  st.Bind(9, e.created_at_us);
  st.Bind(10, e.updated_at_us);
  const std::string embedding = EncodeStoredVector(e.embedding);  // packed when that is shorter
  st.BindBlob(11, embedding.data(), embedding.size());
  st.Bind(12, static_cast<int64_t>(e.key_id));
  st.BindBlob(13, e.tag.data(), e.tag.size());
  // A passed write's report (StoredReport) is stored as an empty column, read back as PassedReport().
  const nlohmann::json report = StoredReport(e.report);
  st.Bind(14, report == PassedReport() ? std::string() : report.dump());
}

void DecodeRowInto(const Statement& st, StoredRow* row) {
  row->row_id = st.Int(0);
  row->decode_error.clear();
  Entry& e = row->entry;
  e.id.assign(st.TextView(1));
  e.name_space.assign(st.TextView(2));
  e.text.assign(st.TextView(3));
  e.metadata = ParseStoredObject(st.TextView(4));
  if (!e.metadata.is_object()) {
    AddProblem(row, "metadata is not a JSON object");
    e.metadata = nlohmann::json::object();
  }
  e.principal.assign(st.TextView(5));
  auto source = ParseSource(st.TextView(6));
  auto kind = ParseKind(st.TextView(7));
  auto state = ParseState(st.TextView(8));
  if (!source) AddProblem(row, "unknown source");
  if (!kind) AddProblem(row, "unknown kind");
  if (!state) AddProblem(row, "unknown state");
  e.source = source.value_or(Source::kUser);
  e.kind = kind.value_or(Kind::kMemory);
  e.state = state.value_or(State::kQuarantined);
  e.created_at_us = st.Int(9);
  e.updated_at_us = st.Int(10);
  if (absl::Status s = DecodeStoredVector(st.BlobView(11), &e.embedding); !s.ok())
    AddProblem(row, absl::StrCat("embedding: ", s.message()));  // names the column, as PostgreSQL's does
  int64_t key_id = st.Int(12);
  if (key_id < 0 || key_id > UINT32_MAX) AddProblem(row, "key id out of range");
  e.key_id = static_cast<uint32_t>(key_id);
  e.tag.assign(st.BlobView(13));
  e.report = st.TextView(14).empty() ? PassedReport() : ParseStoredObject(st.TextView(14));
  if (!e.report.is_object()) {
    AddProblem(row, "report is not a JSON object");
    e.report = nlohmann::json::object();
  }
}

StoredRow DecodeRow(const Statement& st) {
  StoredRow row;
  DecodeRowInto(st, &row);
  return row;
}

}  // namespace bulwark::sqlite_rows
