// SqliteBackend: the embedded default StorageBackend. One database file in WAL mode with
// synchronous=FULL, so a transaction that returned is on disk (it survives kill -9 and, as far as
// the file system honours fsync, power loss). Schema in doc/store_format.md.
#pragma once

#include <absl/synchronization/mutex.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "storage/defense_state_repository.h"
#include "storage/storage_backend.h"

struct sqlite3;

namespace bulwark {

class Statement;

class SqliteBackend final : public StorageBackend, public DefenseStateRepository {
 public:
  // Opens (creating if `create` and absent) the database at `path` and its schema.
  // NotFound if absent and !create; DataLoss if the file is not a Bulwark store or is corrupt;
  // FailedPrecondition for a schema version this build does not know.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SqliteBackend>> Open(const std::filesystem::path& path,
                                                                           bool create);
  ~SqliteBackend() override;

  absl::StatusOr<std::optional<std::string>> GetMeta(std::string_view key) override;
  absl::Status PutMeta(std::string_view key, std::string_view value) override;
  absl::Status ScanMeta(
      std::string_view prefix,
      const std::function<absl::Status(std::string_view, std::string_view)>& visit) override;
  absl::Status DeleteMeta(std::string_view key) override;
  absl::StatusOr<std::vector<int64_t>> InsertEntries(std::span<const Entry> entries,
                                                     std::span<const HistoryEvent> events) override;
  absl::Status UpdateEntry(const Entry& entry, int64_t expected_updated_at_us,
                           const HistoryEvent& event) override;
  absl::Status PurgeEntry(const Entry& purged, int64_t expected_updated_at_us,
                          std::span<const HistoryEvent> scrubbed, const HistoryEvent& event) override;
  absl::StatusOr<std::optional<StoredRow>> GetEntry(std::string_view name_space,
                                                    std::string_view id) override;
  absl::StatusOr<std::vector<std::optional<StoredRow>>> GetRows(std::span<const int64_t> row_ids) override;
  absl::Status ScanEntries(std::string_view name_space,
                           const std::function<absl::Status(const StoredRow&)>& visit) override;
  absl::StatusOr<std::vector<HistoryEvent>> History(std::string_view name_space,
                                                    std::string_view id) override;
  absl::Status ScanHistory(const std::function<absl::Status(const HistoryEvent&)>& visit) override;
  absl::Status ScanNewestEventTimes(std::string_view name_space,
                                    const std::function<void(int64_t, int64_t)>& visit) override;
  absl::StatusOr<int64_t> LastEventSeq() override;
  absl::StatusOr<std::vector<EventRef>> EventsAfter(int64_t seq) override;
  std::vector<int64_t> TakeInsertedEventSeqs() override;
  absl::StatusOr<int64_t> SignEventsFromBeforeSigning(
      const std::function<void(HistoryEvent*)>& sign) override;
  void SetHistoryChain(const HistoryChainSigner* signer) override;
  absl::Status ScanHistoryChain(
      const std::function<absl::Status(const HistoryEvent&, const HistoryLink&)>& visit) override;
  absl::StatusOr<std::optional<HistoryHead>> HistoryChainHead() override;
  absl::StatusOr<std::pair<int64_t, HistoryLink>> NewestLink() override;
  absl::StatusOr<int64_t> LinkEventsFromBeforeTheChain() override;
  absl::StatusOr<std::vector<StateCount>> CountByState() override;
  absl::StatusOr<std::vector<std::pair<std::string, int64_t>>> CountRowsByNamespace() override;
  absl::Status ScanRowsToIndex(const std::function<absl::Status(const StoredRow&)>& visit) override;
  absl::Status ScanIndexColumns(std::string_view name_space, const IndexColumns& columns,
                                const std::function<absl::Status(const StoredRow&)>& visit) override;
  absl::Status CheckIntegrity() override;
  absl::StatusOr<InsertOutcome> InsertEntriesOnce(std::span<const Entry> entries,
                                                  std::span<const HistoryEvent> events,
                                                  const InsertClaim& claim) override;
  absl::StatusOr<std::vector<StoredRow>> ListEntries(const ListQuery& query) override;
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ExpiredEntries(int64_t now_us,
                                                                                  int limit) override;
  absl::StatusOr<int64_t> DeleteIdempotencyRecords(int64_t before_us) override;
  absl::Status SaveQueryHistory(std::string_view name_space, uint64_t first_sequence,
                                std::span<const std::vector<float>> rows, uint64_t keep_from_sequence,
                                bool replace) override;
  absl::Status ScanQueryHistory(
      const std::function<absl::Status(std::string_view, uint64_t, std::vector<float>)>& visit) override;
  absl::Status PutCalibration(std::string_view name_space, std::string_view calibration) override;
  absl::Status ScanCalibrations(
      const std::function<absl::Status(std::string_view, std::string_view)>& visit) override;

 private:
  // The newest event's seq and link (0 and empty before the first event).
  struct ChainTail {
    int64_t seq = 0;
    std::string link;
  };

  explicit SqliteBackend(sqlite3* db);
  // InsertEntries' rows and events inside the caller's transaction. Requires mu_.
  absl::StatusOr<std::vector<int64_t>> InsertLocked(std::span<const Entry> entries,
                                                    std::span<const HistoryEvent> events)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // InsertEntriesOnce's claim checks inside the caller's transaction: fills `outcome` when the
  // insert must not happen. Requires mu_.
  absl::Status CheckClaimLocked(std::string_view name_space, std::string_view principal,
                                const InsertClaim& claim, InsertOutcome* outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Appends `events` inside the caller's write transaction: with a chain signer, under explicit
  // seqs after the newest event, linked, and replaces the head (sqlite_backend_chain.cc); records
  // their seqs in inserted_event_seqs_. DataLoss (nothing written) if the stored head does not
  // name the newest event: events were deleted or the head replaced. An event whose detail holds
  // the text and metadata of the entry of `written` it follows is stored by reference
  // (sqlite_event_rows.h). Requires mu_.
  absl::Status AppendEventsLocked(std::span<const HistoryEvent> events, std::span<const Entry> written)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Before the row of `entry` changes: if its text or metadata will differ from the stored row's,
  // the events that reference the row get the stored text and metadata back. Requires mu_ and the
  // caller's write transaction.
  absl::Status DetachEventsLocked(const Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The stored head, read inside the caller's transaction. Requires mu_.
  absl::StatusOr<std::optional<HistoryHead>> HeadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status PutHeadLocked(const HistoryHead& head) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The chain's newest seq and link inside the caller's write transaction: committed_tail_ when
  // nothing was committed since this connection's last add, otherwise read from the newest event
  // and checked against the stored head. DataLoss if the head does not name the newest event.
  absl::StatusOr<ChainTail> TailLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // SQLITE_FCNTL_DATA_VERSION of the main database file; nullopt if SQLite cannot say (then no
  // tail is kept, and none is taken). Requires mu_.
  std::optional<uint32_t> DataVersionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status UpdateLocked(const Entry& entry, int64_t expected_updated_at_us,
                            std::span<const HistoryEvent> scrubbed, const HistoryEvent& event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The statement cached in `slot`, prepared from `sql` on first use. Requires mu_.
  absl::StatusOr<Statement*> Cached(std::unique_ptr<Statement>& slot, std::string_view sql)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs the cached single-row SELECT in `slot` (prepared from `sql` on first use) with `bind`
  // applied, decodes the row if there is one, and resets the statement so that it holds no read
  // transaction (and no stale snapshot) between calls. Requires mu_.
  absl::StatusOr<std::optional<StoredRow>> ReadOneRow(std::unique_ptr<Statement>& slot, std::string_view sql,
                                                      const std::function<void(Statement&)>& bind,
                                                      std::string_view what)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;  // serializes all use of db_ (statements are not shareable across threads)
  sqlite3* db_ ABSL_GUARDED_BY(mu_);
  // The hot reads (search verifies every candidate), prepared once; guarded by mu_ and finalized
  // before db_ is closed.
  std::unique_ptr<Statement> get_row_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> get_entry_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> begin_read_ ABSL_GUARDED_BY(mu_);  // BEGIN and COMMIT around GetRows' lookups
  std::unique_ptr<Statement> end_read_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> last_event_seq_ ABSL_GUARDED_BY(mu_);
  // The statements every add runs (parsing them again cost more than running them), prepared once.
  std::unique_ptr<Statement> insert_entry_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> insert_event_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> newest_link_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> get_head_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> put_head_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Statement> begin_write_ ABSL_GUARDED_BY(mu_);  // BEGIN IMMEDIATE and COMMIT of an add
  std::unique_ptr<Statement> commit_write_ ABSL_GUARDED_BY(mu_);
  // The last head text this connection wrote or decoded, and its decoding: every add reads the head
  // back, and when the stored text is byte for byte this one it is not parsed again (decoding is a
  // function of the text; the caller still checks that it names the newest event). Empty until
  // the first read or write.
  std::string head_text_ ABSL_GUARDED_BY(mu_);
  HistoryHead head_decoded_ ABSL_GUARDED_BY(mu_);
  // True when head_text_'s tag is known good: this connection signed and wrote it, or an append
  // checked it (CheckHead). Its check is a function of the text and the keyring, which only gains
  // keys, so an append whose stored head is still this text does not compute the HMAC again; any
  // other text is decoded and checked anew. False when the text or the chain signer changes.
  bool head_checked_ ABSL_GUARDED_BY(mu_) = false;
  // The chain's tail as this connection's last add committed it (InsertEntries): the newest event's
  // seq and link, which the head it wrote names. SQLite's data version of the file
  // (SQLITE_FCNTL_DATA_VERSION) changes with every commit of any connection, this one included, so
  // while it still equals tail_version_ nothing was written since that commit: the next append
  // takes the tail from here instead of reading the newest event and the head back. Any other
  // commit (another process, another connection, another kind of write here) changes the version,
  // and the next append reads and checks both as before.
  std::optional<ChainTail> committed_tail_ ABSL_GUARDED_BY(mu_);
  uint32_t tail_version_ ABSL_GUARDED_BY(mu_) = 0;
  ChainTail appended_tail_ ABSL_GUARDED_BY(mu_);  // what the current append leaves, until it commits
  const HistoryChainSigner* chain_ ABSL_GUARDED_BY(mu_) = nullptr;
  // Seqs of the events the current (or last) write appended; guarded by mu_.
  std::vector<int64_t> inserted_event_seqs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace bulwark
