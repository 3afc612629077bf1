// Persistence of fitted gates in the store database (see gate_store.h).
#include "gate/gate_store.h"

#include <absl/strings/str_cat.h>

#include "core/strings.h"
#include "storage/sqlite_util.h"

namespace bulwark {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS query_gates(
  namespace    TEXT PRIMARY KEY,
  mode         TEXT NOT NULL,
  embedder     TEXT NOT NULL,
  fitted_at_us INTEGER NOT NULL,
  source       TEXT NOT NULL,
  model        BLOB NOT NULL
);
)sql";

}  // namespace

absl::StatusOr<std::unique_ptr<GateStore>> GateStore::Open(const std::filesystem::path& db_path) {
  auto db = OpenExistingDatabase(db_path, kSchema);
  if (!db.ok()) return db.status();
  return std::unique_ptr<GateStore>(new GateStore(*db));
}

GateStore::~GateStore() { sqlite3_close(db_); }

absl::Status GateStore::Save(const StoredGate& gate) {
  if (gate.model == nullptr) return absl::InvalidArgumentError("no model to save");
  const std::string bytes = gate.model->Serialize();
  std::lock_guard<std::mutex> lock(mu_);
  Statement st(db_,
               "INSERT OR REPLACE INTO query_gates(namespace, mode, embedder, fitted_at_us, source, model) "
               "VALUES (?, ?, ?, ?, ?, ?)");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, gate.name_space);
  st.Bind(2, ToString(gate.mode));
  st.Bind(3, gate.embedder);
  st.Bind(4, gate.fitted_at_us);
  st.Bind(5, gate.source.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  st.BindBlob(6, bytes.data(), bytes.size());
  return st.Run("save query gate");
}

absl::StatusOr<std::optional<StoredGate>> GateStore::Load(std::string_view name_space) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement st(db_,
               "SELECT mode, embedder, fitted_at_us, source, model FROM query_gates WHERE namespace = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name_space);
  const int rc = st.Step();
  if (rc == SQLITE_DONE) return std::optional<StoredGate>();
  if (rc != SQLITE_ROW) return SqliteError(db_, "load query gate");
  StoredGate gate;
  gate.name_space = std::string(name_space);
  auto mode = ParseGateMode(st.Text(0));
  if (!mode) return absl::DataLossError(absl::StrCat("query gate of ", ToAbsl(name_space), ": unknown mode"));
  gate.mode = *mode;
  gate.embedder = st.Text(1);
  gate.fitted_at_us = st.Int(2);
  gate.source = nlohmann::json::parse(st.Text(3), nullptr, /*allow_exceptions=*/false);
  if (!gate.source.is_object()) gate.source = nlohmann::json{{"corrupt", "source is not a JSON object"}};
  auto model = GateModel::Deserialize(st.Blob(4));
  if (!model.ok()) {
    return absl::DataLossError(
        absl::StrCat("query gate of ", ToAbsl(name_space), ": ", model.status().message()));
  }
  gate.model = std::make_shared<const GateModel>(*std::move(model));
  return std::optional<StoredGate>(std::move(gate));
}

absl::Status GateStore::Remove(std::string_view name_space) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement st(db_, "DELETE FROM query_gates WHERE namespace = ?");
  if (auto s = st.status(); !s.ok()) return s;
  st.Bind(1, name_space);
  if (auto s = st.Run("remove query gate"); !s.ok()) return s;
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("no query gate for namespace ", ToAbsl(name_space)));
  }
  return absl::OkStatus();
}

}  // namespace bulwark
