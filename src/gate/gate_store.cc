// Persistence of fitted gates in the store database (see gate_store.h).
#include "gate/gate_store.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <tuple>

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

constexpr std::string_view kManifestDomain = "bulwark.query_gate_manifest.v1";

// "bulwark.query_gate_manifest.v1", key_id (decimal), then each namespace, every field as an
// 8-byte little-endian length and its bytes (doc/gate_format.md, "Manifest").
std::string ManifestEncoding(const GateManifest& manifest, uint32_t key_id) {
  std::string out(kManifestDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  for (const std::string& name_space : manifest.namespaces) AppendEncodingField(&out, name_space);
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
  RowSigner* manifest_signer = signer->get();  // owned by the GateStore, which owns `rows` too
  rows->SetManifestSigner([manifest_signer](GateManifest* manifest) {
    std::tie(manifest->sign_key_id, manifest->tag) =
        manifest_signer->Sign([manifest](uint32_t key_id) { return ManifestEncoding(*manifest, key_id); });
  });
  // A store from before the manifest: the first one names the gates there are now, once.
  if (rows->manifest_pending()) BULWARK_RETURN_IF_ERROR(rows->WriteManifest());
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

absl::StatusOr<std::vector<std::string>> GateStore::ManifestNamespaces() {
  absl::StatusOr<std::optional<GateManifest>> manifest = rows_->Manifest();
  BULWARK_RETURN_IF_ERROR(manifest.status());
  if (!manifest->has_value()) {
    if (rows_->manifest_pending()) return std::vector<std::string>();
    return absl::DataLossError("the signed manifest of query gates is missing (deleted?)");
  }
  const GateManifest& m = **manifest;
  BULWARK_RETURN_IF_ERROR(signer_->Verify("the manifest of query gates", m.sign_key_id, m.tag,
                                          [&m](uint32_t key_id) { return ManifestEncoding(m, key_id); }));
  return m.namespaces;
}

absl::StatusOr<std::optional<StoredGate>> GateStore::Load(std::string_view name_space) {
  BULWARK_ASSIGN_OR_RETURN(std::optional<GateRow> row, rows_->Find(name_space));
  if (!row) {
    // No row: fine unless the signed manifest says the namespace has a gate (deleted by hand).
    absl::StatusOr<std::vector<std::string>> named = ManifestNamespaces();
    if (!named.ok()) {
      // A store whose manifest is gone and that has no gate at all cannot be told from a new one.
      if (named.status().code() != absl::StatusCode::kDataLoss) return named.status();
      BULWARK_ASSIGN_OR_RETURN(const std::vector<GateRow> all, rows_->List());
      if (all.empty()) return std::optional<StoredGate>();
      return absl::DataLossError(
          absl::StrCat("query gate of ", ToAbsl(name_space), ": ", named.status().message()));
    }
    if (std::find(named->begin(), named->end(), name_space) != named->end()) {
      return absl::DataLossError(absl::StrCat("query gate of ", ToAbsl(name_space),
                                              ": deleted (the signed manifest of query gates names it)"));
    }
    return std::optional<StoredGate>();
  }
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
  absl::StatusOr<std::vector<std::string>> named = ManifestNamespaces();
  if (!named.ok()) {
    if (named.status().code() != absl::StatusCode::kDataLoss) return named.status();
    if (!rows.empty()) problems.push_back(std::string(named.status().message()));
    return problems;
  }
  for (const std::string& name_space : *named) {
    const bool present = std::any_of(rows.begin(), rows.end(),
                                     [&](const GateRow& row) { return row.name_space == name_space; });
    if (!present) {
      problems.push_back(absl::StrCat("query gate of ", name_space,
                                      ": deleted (the signed manifest of query gates names it)"));
    }
  }
  for (const GateRow& row : rows) {
    if (std::find(named->begin(), named->end(), row.name_space) == named->end()) {
      problems.push_back(
          absl::StrCat("query gate of ", row.name_space, ": not in the signed manifest of query gates"));
    }
  }
  return problems;
}

}  // namespace bulwark
