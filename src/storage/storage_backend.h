// StorageBackend: the repository of entries and their history (DESIGN 3, src/storage). Where
// entries and their history live durably. The embedded default is SQLite
// (sqlite_backend.h); a PostgreSQL backend can implement the same interface.
//
// A backend stores bytes; it does not trust them. Rows read back are decoded defensively: a row
// whose fields do not parse comes back with `decode_error` set instead of failing the whole call,
// so `verify` can list it and search can skip it.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bulwark/entry.h"

namespace bulwark {

struct StoredRow {
  int64_t row_id = 0;
  Entry entry;
  std::string decode_error;  // empty when every field decoded
  bool ok() const { return decode_error.empty(); }
};

// Counts of entries per (namespace, state, kind).
struct StateCount {
  std::string name_space;
  State state = State::kActive;
  Kind kind = Kind::kMemory;
  int64_t count = 0;
};

// What an insert claims besides its rows (InsertEntriesOnce): at most one idempotency record and
// at most one client-chosen entry key. The namespace and principal are those of the entries.
struct InsertClaim {
  // Idempotency (doc/api.md, "Idempotency-Key"): the record (namespace, principal,
  // idempotency_key) -> the ids this insert stores. Empty: no record.
  std::string idempotency_key;
  std::string request_hash;          // what the record remembers of the request (hex SHA-256)
  int64_t idempotency_after_us = 0;  // records created at or before this are expired: replaced
  // The client-chosen key of the (single) entry: refused while a live (active or quarantined)
  // entry of the namespace carries it. Empty: no key.
  std::string entry_key;
  int64_t now_us = 0;  // an entry whose "bulwark.expires_at_us" is at or before this holds no key
};

// The result of InsertEntriesOnce: exactly one of these holds.
struct InsertOutcome {
  std::vector<int64_t> row_ids;         // inserted: the row id of each entry, in order
  std::vector<std::string> replay_ids;  // not inserted: the live idempotency record's entry ids
  std::string replay_request_hash;      // ... and the request hash it was stored with
  std::string key_taken_by;             // not inserted: the id of the live entry holding entry_key
};

// One page of a namespace's entries in id order (ListEntries).
struct ListQuery {
  std::string name_space;
  std::string after_id;            // exclusive; empty: from the start
  std::vector<State> states;       // rows in one of these states; must not be empty
  std::optional<std::string> key;  // only rows whose metadata "bulwark.key" is this
  int limit = 100;                 // rows read, 1..10000
};

// The store-wide history chain (issue #18 point 6 (i); doc/entry_format.md, "History chain").
// An event's link: an HMAC over its seq, who and what it is, and the link of the event before it.
struct HistoryLink {
  uint32_t key_id = 0;
  std::string link;  // 32 raw bytes; empty: the event is not in the chain
};
// The signed head of the chain: the newest event's seq and link, kept beside the events and
// written in the same transaction as every event.
struct HistoryHead {
  int64_t seq = 0;
  std::string link;
  uint32_t key_id = 0;
  std::string tag;  // HMAC over (seq, link)
};
// Computes links and heads (the store's keyring; store/history_chain.h). A backend calls it inside
// the transaction that appends events, under its write lock.
class HistoryChainSigner {
 public:
  virtual ~HistoryChainSigner() = default;
  // The link of `event` (its seq assigned) after `previous_link` (empty for the store's first event).
  virtual HistoryLink Link(const HistoryEvent& event, std::string_view previous_link) const = 0;
  // The head naming event `seq` whose link is `link`, signed.
  virtual HistoryHead Head(int64_t seq, std::string_view link) const = 0;
  // OK if the head's tag checks; DataLoss if not (a head replaced by hand).
  [[nodiscard]] virtual absl::Status CheckHead(const HistoryHead& head) const = 0;
};

class StorageBackend {
 public:
  virtual ~StorageBackend() = default;

  // Store-wide key/value metadata (format version, embedder fingerprint, ...).
  [[nodiscard]] virtual absl::StatusOr<std::optional<std::string>> GetMeta(std::string_view key) = 0;
  [[nodiscard]] virtual absl::Status PutMeta(std::string_view key, std::string_view value) = 0;
  // Every metadata row whose key starts with `prefix`, by key; stops early on the visitor's error.
  [[nodiscard]] virtual absl::Status ScanMeta(
      std::string_view prefix,
      const std::function<absl::Status(std::string_view, std::string_view)>& visit) = 0;
  // Deletes the metadata row `key` (OK if there is none).
  [[nodiscard]] virtual absl::Status DeleteMeta(std::string_view key) = 0;

  // Inserts the entries and the history events in one transaction: all are durable when this
  // returns OK, none are on any error. Returns the row id of each entry, in order. AlreadyExists
  // if an id is taken.
  [[nodiscard]] virtual absl::StatusOr<std::vector<int64_t>> InsertEntries(
      std::span<const Entry> entries, std::span<const HistoryEvent> events) = 0;

  // Replaces the stored row of `entry` (matched by namespace and id) and appends `event`,
  // atomically, if the stored row's updated_at_us is still `expected_updated_at_us` (the version
  // the caller read: compare-and-set, so that two writers, in one process or in several, never
  // overwrite each other's change unseen). Aborted if the row has another version; NotFound if
  // there is no such row. A PostgreSQL implementation must make the check and the write one
  // statement or one serializable transaction.
  [[nodiscard]] virtual absl::Status UpdateEntry(const Entry& entry, int64_t expected_updated_at_us,
                                                 const HistoryEvent& event) = 0;

  // Like UpdateEntry, and also replaces the detail, key id and tag of each earlier history event
  // of the entry with those of `scrubbed` (matched by seq; GDPR erasure: the text must not survive
  // anywhere in the store, and the scrubbed events carry new tags).
  [[nodiscard]] virtual absl::Status PurgeEntry(const Entry& purged, int64_t expected_updated_at_us,
                                                std::span<const HistoryEvent> scrubbed,
                                                const HistoryEvent& event) = 0;

  // The row of (namespace, id), or nullopt if there is none.
  [[nodiscard]] virtual absl::StatusOr<std::optional<StoredRow>> GetEntry(std::string_view name_space,
                                                                          std::string_view id) = 0;
  // The rows with these row ids, in the same order, nullopt where there is none. All are read in
  // one read transaction: one consistent snapshot, taken during the call. This is the search path's
  // read: the rows' advisory `report` is left empty (GetEntry and ScanEntries return it).
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::optional<StoredRow>>> GetRows(
      std::span<const int64_t> row_ids) = 0;

  // Calls `visit` for every row (of one namespace, or all when `name_space` is empty) in row-id
  // order. Stops early and returns the visitor's error if it returns one.
  [[nodiscard]] virtual absl::Status ScanEntries(
      std::string_view name_space, const std::function<absl::Status(const StoredRow&)>& visit) = 0;

  // History of one entry, oldest first. Empty if the entry is unknown.
  [[nodiscard]] virtual absl::StatusOr<std::vector<HistoryEvent>> History(std::string_view name_space,
                                                                          std::string_view id) = 0;

  // What other writers changed: the seq of the newest history event (0 if none), and the events
  // after `seq` (seq, namespace and entry id only), oldest first. Every change to an entry appends
  // an event, so the events after the last one a process has seen name every entry that another
  // process changed since. Contract for every implementation: seq is assigned in commit order and
  // an event with a lower seq is never committed after one with a higher seq has become visible
  // (SQLite's single writer gives this; on PostgreSQL a plain sequence does not, because
  // transactions commit out of the order they drew numbers in: use a per-namespace counter row
  // updated in the writing transaction, or read only up to the oldest in-flight transaction).
  struct EventRef {
    int64_t seq = 0;
    std::string name_space;
    std::string entry_id;
  };
  // For every entry row with history (of namespace `name_space`; "" = every namespace): its row id
  // and the newest at_us of its events. A write sets the entry's updated_at_us and its event's at_us
  // to the same time, so a row older than its newest event was replaced by an earlier version of
  // itself.
  [[nodiscard]] virtual absl::Status ScanNewestEventTimes(
      std::string_view name_space, const std::function<void(int64_t, int64_t)>& visit) = 0;
  [[nodiscard]] virtual absl::StatusOr<int64_t> LastEventSeq() = 0;
  [[nodiscard]] virtual absl::StatusOr<std::vector<EventRef>> EventsAfter(int64_t seq) = 0;
  // EventsAfter for a reader that holds only the namespaces `held` (a replica of a replica group):
  // every event after `seq` of a namespace in `held`, and for each other namespace with events
  // after `seq` one EventRef naming it, with the seq of its newest such event and an empty
  // entry_id; in seq order, from one snapshot, so the newest seq listed is EventsAfter's. The
  // reader learns every namespace and how far it read without a row per event of the others.
  // The default filters EventsAfter; PostgreSQL answers it in one query.
  [[nodiscard]] virtual absl::StatusOr<std::vector<EventRef>> HeldEventsAfter(
      int64_t seq, const std::vector<std::string>& held);
  // The seqs of the events the last successful InsertEntries, UpdateEntry or PurgeEntry appended
  // (so the writer can tell its own events from other writers'), and forgets them.
  virtual std::vector<int64_t> TakeInsertedEventSeqs() = 0;

  // Calls `visit` for every history event of the store, in seq order; stops early on its error.
  [[nodiscard]] virtual absl::Status ScanHistory(
      const std::function<absl::Status(const HistoryEvent&)>& visit) = 0;
  // Once, after an upgrade from a store whose history was not signed (schema version 1): `sign`
  // sets the key id and tag of each event written before the upgrade that has none, and they are
  // stored in one transaction. Events written later are never touched: one without a tag was
  // tampered with and must fail verification. Returns how many were signed (0 once done).
  [[nodiscard]] virtual absl::StatusOr<int64_t> SignEventsFromBeforeSigning(
      const std::function<void(HistoryEvent*)>& sign) = 0;

  // --- The history chain (issue #18 point 6 (i)). Contract for every implementation: with a
  // chain signer set, every write that appends events (InsertEntries, InsertEntriesOnce,
  // UpdateEntry, PurgeEntry) gives them seqs above the newest event and links them, each after the
  // one before, starting from the newest event's link as read under the write lock in the same
  // transaction, and replaces the head in that transaction: two writers never fork the chain
  // (SQLite: BEGIN IMMEDIATE; PostgreSQL: lock the head row FOR UPDATE first). PurgeEntry's
  // scrubbed events keep their links.

  // Sets the chain signer for every later write (not owned; must outlive the writes). Without one
  // (the default) events are appended unlinked: only for the backend's own tests.
  virtual void SetHistoryChain(const HistoryChainSigner* signer) = 0;
  // Calls `visit` with every event and its link, in seq order, from one snapshot; stops early on
  // its error.
  [[nodiscard]] virtual absl::Status ScanHistoryChain(
      const std::function<absl::Status(const HistoryEvent&, const HistoryLink&)>& visit) = 0;
  // The stored head; nullopt if none was ever written. DataLoss if it does not decode.
  [[nodiscard]] virtual absl::StatusOr<std::optional<HistoryHead>> HistoryChainHead() = 0;
  // The newest event's seq and link ({0, {}} for a store without events).
  [[nodiscard]] virtual absl::StatusOr<std::pair<int64_t, HistoryLink>> NewestLink() = 0;
  // Once, after an upgrade from a store without the chain (schema version < 4): links the events
  // written before the upgrade, in seq order, and writes the head, in one transaction. Events
  // written later are never linked here: an unlinked one was inserted by hand. Returns how many
  // were linked (0 once done). FailedPrecondition without a chain signer.
  [[nodiscard]] virtual absl::StatusOr<int64_t> LinkEventsFromBeforeTheChain() = 0;

  [[nodiscard]] virtual absl::StatusOr<std::vector<StateCount>> CountByState() = 0;

  // What an open loads into its in-memory index (EntryStore), cheaper than the calls above.
  // Rows per namespace in every state (an upper bound of what is indexed: the index is sized
  // once). The default sums CountByState.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> CountRowsByNamespace();
  // Every row, as ScanEntries("", visit) but with the advisory `report` left empty, and the same
  // StoredRow object may be reused from one call of `visit` to the next (a visitor copies what it
  // keeps). The default calls ScanEntries.
  [[nodiscard]] virtual absl::Status ScanRowsToIndex(
      const std::function<absl::Status(const StoredRow&)>& visit);
  // The columns of a row an in-memory index is built from, beyond row_id, id, namespace, source,
  // kind, state, created_at_us, updated_at_us and key_id, which are always read.
  struct IndexColumns {
    bool embedding = false;  // the open: the vector index
    bool text = false;       // a namespace's lexical index, built on its first hybrid search
    bool metadata = false;   // a namespace's metadata index, built on its first filtered search
  };
  // Every row of `name_space` (of the store if empty), in row_id order, as ScanRowsToIndex but with
  // only the columns above and those `columns` asks for: a column not asked for may be left empty
  // (text, principal, tag and embedding empty, metadata an empty object). A problem decoding a read
  // column lands in decode_error as always. The same StoredRow object may be reused between calls.
  // The default reads every column (ScanRowsToIndex, or ScanEntries for one namespace).
  [[nodiscard]] virtual absl::Status ScanIndexColumns(
      std::string_view name_space, const IndexColumns& columns,
      const std::function<absl::Status(const StoredRow&)>& visit);

  // The storage engine's own consistency check of the store's pages and indexes (SQLite:
  // PRAGMA quick_check), not of signatures. OK, or DataLoss with the first problems found.
  [[nodiscard]] virtual absl::Status CheckIntegrity() = 0;

  // --- Routes the agent clients need (issue #15 point 1; doc/api.md). ---

  // InsertEntries with `claim` checked in the same transaction: if a live idempotency record
  // (created after claim.idempotency_after_us) matches, or a live entry holds claim.entry_key,
  // nothing is written and the outcome says which; otherwise the entries, events and the
  // idempotency record (if any) are written together. Errors as InsertEntries.
  [[nodiscard]] virtual absl::StatusOr<InsertOutcome> InsertEntriesOnce(std::span<const Entry> entries,
                                                                        std::span<const HistoryEvent> events,
                                                                        const InsertClaim& claim) = 0;
  // Up to query.limit rows of memories (never honeypots) of one namespace with id > after_id, in
  // id order (ids are time-ordered: oldest first), in the asked states, undecoded rows included
  // (the caller verifies). InvalidArgument for a limit outside 1..10000 or no states.
  [[nodiscard]] virtual absl::StatusOr<std::vector<StoredRow>> ListEntries(const ListQuery& query) = 0;
  // (namespace, id) of up to `limit` rows not purged whose metadata "bulwark.expires_at_us" is an
  // integer <= now_us, oldest expiry first.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ExpiredEntries(
      int64_t now_us, int limit) = 0;
  // Deletes idempotency records created at or before `before_us`; returns how many.
  [[nodiscard]] virtual absl::StatusOr<int64_t> DeleteIdempotencyRecords(int64_t before_us) = 0;
};

}  // namespace bulwark
