// The plain values that a store's searches, Verify and Stats return: shared by the public DB
// (bulwark/db.h) and the library's internal layers. Data only; no behaviour beyond ToJson.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/entry.h"

namespace bulwark {

struct SearchHit {
  Entry entry;
  float score = 0;  // cosine similarity with the query
};

// One row that failed verification.
struct BadRow {
  int64_t row_id = 0;
  std::string id;
  std::string name_space;
  std::string reason;
};

// One history event that failed verification.
struct BadEvent {
  int64_t seq = 0;
  std::string entry_id;
  std::string name_space;
  std::string reason;
};

struct VerifyReport {
  int64_t rows_checked = 0;
  std::vector<BadRow> bad_rows;
  int64_t events_checked = 0;
  std::vector<BadEvent> bad_events;
  std::string integrity_problem;  // the database engine's integrity check; empty when it passed
  // Problems found outside the entries and their history (DB::Verify: the signed query-gate
  // rows). Empty from MemoryStore::Verify.
  std::vector<std::string> other_problems;
  bool ok() const {
    return bad_rows.empty() && bad_events.empty() && integrity_problem.empty() && other_problems.empty();
  }
};

// {"rows_checked", "bad_rows": [{"row_id", "id", "namespace", "reason"}], "events_checked",
//  "bad_events": [{"seq", "entry_id", "namespace", "reason"}], "integrity": "ok" or the problem,
//  "ok"}: for the CLI and the API.
nlohmann::json ToJson(const VerifyReport& report);

struct NamespaceStats {
  std::string name_space;
  int64_t active = 0, quarantined = 0, deleted = 0, purged = 0, honeypots = 0;
};

struct StoreStats {
  EmbedderFingerprint embedder;
  uint32_t newest_key_id = 0;
  size_t key_count = 0;
  std::vector<NamespaceStats> namespaces;
  int64_t signature_failures = 0;  // since this process opened the store
};

}  // namespace bulwark
