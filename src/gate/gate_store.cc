// Persistence of fitted gates in the store database (see gate_store.h).
#include "gate/gate_store.h"

#include <absl/strings/str_cat.h>

#include "core/status_macros.h"
#include "core/strings.h"
#include "provenance/signer.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

constexpr std::string_view kGateDomain = "bulwark.query_gate.v1";

std::string GateRowEncoding(const GateRow& row, uint32_t key_id) {
  std::string out(kGateDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, row.name_space);
  AppendEncodingField(&out, row.mode);
  AppendEncodingField(&out, row.embedder);
  AppendEncodingField(&out, absl::StrCat(row.fitted_at_us));
  AppendEncodingField(&out, row.source);
  AppendEncodingField(&out, row.model);
  return out;
}

void SignGateRow(RowSigner& signer, GateRow* row) {
  std::tie(row->sign_key_id, row->tag) =
      signer.Sign([row](uint32_t key_id) { return GateRowEncoding(*row, key_id); });
}

}  // namespace

absl::StatusOr<std::unique_ptr<GateStore>> GateStore::Open(const std::filesystem::path& db_path,
                                                           std::filesystem::path keyring_path) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<GateRepository> rows,
                           OpenGateRepository(StoreLayout::ForDatabase(db_path).dir().string()));
  if (keyring_path.empty()) keyring_path = StoreLayout::ForDatabase(db_path).keyring();
  auto signer = RowSigner::Load(keyring_path);
  if (!signer.ok()) {
    return absl::Status(signer.status().code(),
                        absl::StrCat("query gates need the store's keyring: ", signer.status().message()));
  }
  if (rows->upgraded_from_unsigned()) {  // a store made before rows were signed: sign them, once
    BULWARK_ASSIGN_OR_RETURN(std::vector<GateRow> all, rows->List());
    for (GateRow& row : all) {
      SignGateRow(**signer, &row);
      BULWARK_RETURN_IF_ERROR(rows->Save(row));
    }
    BULWARK_RETURN_IF_ERROR(rows->FinishSigningUpgrade());
  }
  return std::unique_ptr<GateStore>(new GateStore(std::move(rows), *std::move(signer)));
}

GateStore::~GateStore() = default;

absl::Status GateStore::Save(const StoredGate& gate) {
  if (gate.model == nullptr) return absl::InvalidArgumentError("no model to save");
  GateRow row{gate.name_space,
              std::string(ToString(gate.mode)),
              gate.embedder,
              gate.fitted_at_us,
              gate.source.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
              gate.model->Serialize()};
  SignGateRow(*signer_, &row);
  return rows_->Save(row);
}

absl::StatusOr<StoredGate> GateStore::Decode(const GateRow& row) {
  BULWARK_RETURN_IF_ERROR(signer_->Verify(absl::StrCat("query gate of ", row.name_space), row.sign_key_id,
                                          row.tag,
                                          [&row](uint32_t key_id) { return GateRowEncoding(row, key_id); }));
  StoredGate gate;
  gate.name_space = row.name_space;
  auto mode = ParseGateMode(row.mode);
  if (!mode) return absl::DataLossError(absl::StrCat("query gate of ", row.name_space, ": unknown mode"));
  gate.mode = *mode;
  gate.embedder = row.embedder;
  gate.fitted_at_us = row.fitted_at_us;
  gate.source = nlohmann::json::parse(row.source, nullptr, /*allow_exceptions=*/false);
  if (!gate.source.is_object()) gate.source = nlohmann::json{{"corrupt", "source is not a JSON object"}};
  auto model = GateModel::Deserialize(row.model);
  if (!model.ok()) {
    return absl::DataLossError(
        absl::StrCat("query gate of ", row.name_space, ": ", model.status().message()));
  }
  gate.model = std::make_shared<const GateModel>(*std::move(model));
  return gate;
}

absl::StatusOr<std::optional<StoredGate>> GateStore::Load(std::string_view name_space) {
  BULWARK_ASSIGN_OR_RETURN(std::optional<GateRow> row, rows_->Find(name_space));
  if (!row) return std::optional<StoredGate>();
  BULWARK_ASSIGN_OR_RETURN(StoredGate gate, Decode(*row));
  return std::optional<StoredGate>(std::move(gate));
}

absl::Status GateStore::Remove(std::string_view name_space) { return rows_->Remove(name_space); }

absl::StatusOr<std::vector<std::string>> GateStore::Verify() {
  BULWARK_ASSIGN_OR_RETURN(std::vector<GateRow> rows, rows_->List());
  std::vector<std::string> problems;
  for (const GateRow& row : rows) {
    if (absl::Status s = Decode(row).status(); !s.ok()) problems.push_back(std::string(s.message()));
  }
  return problems;
}

}  // namespace bulwark
