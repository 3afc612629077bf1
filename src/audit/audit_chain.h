// The audit log's signed hash chain: every record written by a log that has the store's keyring
// carries key_id and tag = HMAC-SHA256(key[key_id], AuditRecordEncoding(record, key_id,
// previous_tag)), where previous_tag is the tag of the record just before it in seq order (empty
// for the first record, or when that record is unsigned). So an operator can check that no record
// was edited, forged, reordered, or removed from the middle of the log: removing a record breaks
// the tag of the one after it. Not detected: removing records from the end (nothing follows them
// to break), and anything done by someone who holds the keyring. Byte format in
// doc/store_format.md ("Audit log").
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/audit_log.h"
#include "provenance/keyring.h"

namespace bulwark {

inline constexpr std::string_view kAuditDomain = "bulwark.audit.v1";

// A record as stored: its seq, its scalar fields, and returned_ids and detail as the JSON texts in
// the row (compact; invalid UTF-8 replaced), so that checking a row encodes exactly the bytes
// written.
struct StoredAuditRecord {
  int64_t seq;
  const AuditRecord& record;  // at_us, principal, session, name_space, operation, query_hash
  std::string_view returned_ids_json;
  std::string_view detail_json;
};

// "bulwark.audit.v1", then each field as an 8-byte little-endian length and its bytes:
//   key_id (decimal), seq (decimal), at_us (decimal), principal, session, namespace, operation,
//   query_hash, returned_ids (the stored JSON text), detail (the stored JSON text), previous_tag
//   (raw bytes; empty for the first record of a chain).
std::string AuditRecordEncoding(const StoredAuditRecord& row, uint32_t key_id, std::string_view previous_tag);

// The 32-byte tag of `row` under key `key_id` of `keyring`. FailedPrecondition if the keyring has
// no such key; Internal if OpenSSL fails.
[[nodiscard]] absl::StatusOr<std::string> AuditRecordTag(const Keyring& keyring, const StoredAuditRecord& row,
                                                         uint32_t key_id, std::string_view previous_tag);

// The outcome of checking a whole log (AuditLog::Verify).
struct AuditVerification {
  struct Bad {
    int64_t seq = 0;
    std::string reason;
  };
  int64_t records = 0;           // rows read
  int64_t unsigned_records = 0;  // written before the log was signed (the rows before the first tag)
  std::vector<Bad> bad;          // in seq order: a wrong tag, an unknown key, a row without a tag
                                 // after signed rows, a row that does not decode
  bool ok() const { return bad.empty(); }
};

nlohmann::json ToJson(const AuditVerification& verification);

}  // namespace bulwark
