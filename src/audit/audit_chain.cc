// Audit record encoding and tags (see audit_chain.h).
#include "audit/audit_chain.h"

#include <absl/strings/str_cat.h>

#include "provenance/signer.h"

namespace bulwark {
std::string AuditRecordEncoding(const StoredAuditRecord& row, uint32_t key_id,
                                std::string_view previous_tag) {
  const AuditRecord& record = row.record;
  std::string out(kAuditDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, absl::StrCat(row.seq));
  AppendEncodingField(&out, absl::StrCat(record.at_us));
  AppendEncodingField(&out, record.principal);
  AppendEncodingField(&out, record.session);
  AppendEncodingField(&out, record.name_space);
  AppendEncodingField(&out, record.operation);
  AppendEncodingField(&out, record.query_hash);
  AppendEncodingField(&out, row.returned_ids_json);
  AppendEncodingField(&out, row.detail_json);
  AppendEncodingField(&out, previous_tag);
  return out;
}

absl::StatusOr<std::string> AuditRecordTag(const Keyring& keyring, const StoredAuditRecord& row,
                                           uint32_t key_id, std::string_view previous_tag) {
  const std::shared_ptr<const HmacKey> key = keyring.Find(key_id);
  if (key == nullptr) return absl::FailedPreconditionError(absl::StrCat("no signing key ", key_id));
  return HmacSha256(*key, AuditRecordEncoding(row, key_id, previous_tag));
}

nlohmann::json ToJson(const AuditVerification& verification) {
  nlohmann::json bad = nlohmann::json::array();
  for (const AuditVerification::Bad& b : verification.bad)
    bad.push_back({{"seq", b.seq}, {"reason", b.reason}});
  return {{"records", verification.records},
          {"unsigned_records", verification.unsigned_records},
          {"bad_records", bad},
          {"ok", verification.ok()}};
}

}  // namespace bulwark
