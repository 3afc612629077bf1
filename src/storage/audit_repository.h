// AuditRepository: the stored rows of the audit log (audit/audit_log.h, DESIGN 4.9) -- which
// memories fed which answer -- as the bytes the audit log signs into its hash chain
// (audit/audit_chain.h). It keeps rows and knows nothing of operations, signing keys or tags: a
// row it returns may have been edited by anyone with write access to the store, which is why the
// chain exists.
//
// Contract for every implementation (SQLite here; a PostgreSQL one must give the same):
// - Append is one transaction that holds the log's write lock from reading the head to commit, so
//   two processes appending at once never fork the chain: the second sees the first's rows as
//   its head. All of the batch's rows are durable when it returns OK, none on any error.
// - seq is unique and increasing in commit order (a row with a lower seq is never committed after
//   one with a higher seq has become visible).
// - Query and Scan see committed rows only; Scan reads one consistent snapshot and does not block
//   Append for longer than a read does.
// - Opening an implementation brings its tables to the current schema (Upgrade): callers never
//   see an older layout.
// Every method may also return Unavailable (busy, I/O) or DataLoss (a corrupt file).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bulwark {

// One audit record as stored.
struct AuditRow {
  int64_t seq = 0;  // Append: 0 assigns the next seq (an unsigned row); otherwise this seq
  int64_t at_us = 0;
  std::string principal;
  std::string session;
  std::string name_space;
  std::string operation;
  std::string query_hash;
  std::string returned_ids;  // the stored JSON text (an array of ids)
  std::string detail;        // the stored JSON text (an object)
  uint32_t key_id = 0;
  std::optional<std::string> tag;  // nullopt: written unsigned
};

// The newest row of the log (seq 0 and no tag when the log is empty).
struct AuditHead {
  int64_t seq = 0;
  std::optional<std::string> tag;
};

// Filters of Query: a row matches when it matches every filter given.
struct AuditFilter {
  std::optional<std::string> principal;
  std::optional<std::string> session;
  std::optional<std::string> name_space;
  std::optional<std::string> entry_id;  // rows whose returned_ids holds exactly this id
  int64_t since_us = 0;                 // at_us >= since_us; 0: no lower bound
  int limit = 100;                      // 1 .. 10000
};

class AuditRepository {
 public:
  static constexpr int kMaxQueryLimit = 10000;

  virtual ~AuditRepository() = default;

  // Appends a batch in one transaction: takes the write lock, reads the head, calls `build` with
  // it once, and writes the rows `build` returns in their order. A row with seq != 0 must be
  // above the head and above the rows before it (AlreadyExists otherwise). Nothing is written if
  // `build` fails (its error is returned).
  using BuildBatch = std::function<absl::StatusOr<std::vector<AuditRow>>(const AuditHead& head)>;
  [[nodiscard]] virtual absl::Status Append(const BuildBatch& build) = 0;
  // The newest row's seq and tag.
  [[nodiscard]] virtual absl::StatusOr<AuditHead> Head() = 0;
  // The rows that match `filter`, newest (highest seq) first, at most filter.limit of them.
  // InvalidArgument for a limit outside 1..kMaxQueryLimit.
  [[nodiscard]] virtual absl::StatusOr<std::vector<AuditRow>> Query(const AuditFilter& filter) = 0;
  // Calls `visit` with every row in seq order, from one snapshot (verify); stops early on its error.
  [[nodiscard]] virtual absl::Status Scan(const std::function<absl::Status(const AuditRow&)>& visit) = 0;
  // Brings the tables to the current schema and moves in the records earlier versions kept
  // elsewhere (SQLite: the store's own file). Idempotent; opening the repository runs it.
  [[nodiscard]] virtual absl::Status Upgrade() = 0;
};

}  // namespace bulwark
