// The signed extraction-intent tables of the honeypot fits (see honeypot_intent_table.h).
#include "retrieval/honeypot_intent_table.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/signer.h"

namespace bulwark {
namespace {

constexpr std::string_view kIntentTableDomain = "bulwark.honeypot_intent.v1";

std::string TableEncoding(std::string_view name_space, int64_t run_id, std::string_view table_json,
                          uint32_t key_id) {
  std::string out(kIntentTableDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, name_space);
  AppendEncodingField(&out, absl::StrCat(run_id));
  AppendEncodingField(&out, table_json);
  return out;
}

absl::StatusOr<std::shared_ptr<const honeypot::IntentGrammar>> DefaultGrammar() {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<honeypot::IntentGrammar> grammar,
                           honeypot::IntentGrammar::Default());
  return std::shared_ptr<const honeypot::IntentGrammar>(std::move(grammar));
}

}  // namespace

IntentTableStore::IntentTableStore(HoneypotRepository* repository, const Keyring* keyring)
    : repository_(repository), signer_(std::make_unique<Signer>(keyring)) {
  // The compiled-in grammar parses (intent_evidence_test); a null grammar refuses every table.
  auto grammar = DefaultGrammar();
  if (grammar.ok()) grammar_ = *std::move(grammar);
}

IntentTableStore::~IntentTableStore() = default;

absl::Status IntentTableStore::Put(std::string_view name_space, int64_t run_id,
                                   const honeypot::IntentCalibration& table) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  if (grammar_ == nullptr) return absl::InternalError("the intent grammar does not parse");
  BULWARK_RETURN_IF_ERROR(honeypot::IntentEvidence::Create(grammar_, table).status());
  HoneypotIntentTable row;
  row.name_space = std::string(name_space);
  row.run_id = run_id;
  row.table = table.ToJson().dump();
  auto [key_id, tag] =
      signer_->NewestTag([&](uint32_t id) { return TableEncoding(name_space, run_id, row.table, id); });
  row.sign_key_id = key_id;
  row.tag = std::move(tag);
  return repository_->PutIntentTable(row);
}

absl::StatusOr<int64_t> IntentTableStore::Delete(std::string_view name_space) {
  return repository_->DeleteIntentTable(name_space);
}

absl::StatusOr<StoredIntentTable> IntentTableStore::Decode(const HoneypotIntentTable& row) const {
  auto bad = [&](std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("stored honeypot intent table of namespace ", row.name_space, ": ", ToAbsl(why)));
  };
  if (absl::Status s = signer_->CheckTag(
          [] { return std::string("tag"); }, static_cast<uint32_t>(row.sign_key_id), row.tag,
          [&](uint32_t id) { return TableEncoding(row.name_space, row.run_id, row.table, id); });
      !s.ok()) {
    return bad(ToStd(s.message()));
  }
  const nlohmann::json json = nlohmann::json::parse(row.table, nullptr, /*allow_exceptions=*/false);
  auto table = honeypot::IntentCalibration::FromJson(json);
  if (!table.ok()) return bad(ToStd(table.status().message()));
  if (grammar_ == nullptr) return bad("the intent grammar does not parse");
  auto evidence = honeypot::IntentEvidence::Create(grammar_, *std::move(table));
  if (!evidence.ok()) return bad("its categories are not this version's grammar (refit)");
  return StoredIntentTable{row.run_id, *std::move(evidence)};
}

absl::Status IntentTableStore::Scan(
    const std::function<absl::Status(std::string_view, const absl::StatusOr<StoredIntentTable>&)>& visit)
    const {
  return repository_->ScanIntentTables(
      [&](const HoneypotIntentTable& row) { return visit(row.name_space, Decode(row)); });
}

}  // namespace bulwark
