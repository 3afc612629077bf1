// bulwark::DB: the public C++ API of a Bulwark store (LevelDB's DB/DBImpl split: an abstract
// class here, its implementation in src/api/db_impl.h). A store is a directory holding the
// database and, by default, the signing keyring.
//
//   bulwark::Options options;
//   auto db = bulwark::DB::Create("/var/lib/bulwark", options);  // or DB::Open
//   bulwark::WriteContext alice{.principal = "alice"};
//   auto entry = (*db)->Add(alice, "alice", {.text = "Alice prefers window seats"});
//   auto found = (*db)->Search({.principal = "alice"}, "alice", "seat preference", {.k = 5});
//
// Every call goes through the same defenses as the HTTP API (doc/api.md):
//   * writes run the write pipeline: validate -> embed -> write gate -> sign -> persist -> index;
//     a write the gate flags is stored quarantined (kept, signed, reviewable) and never returned
//     by a search;
//   * Search is the defended read path with the namespace's settings: its query gate (a rejected
//     query is PermissionDenied "query_rejected"), smoothing when configured or escalated, and the
//     honeypot monitor; honeypots are never returned by any call;
//   * callers that are not admins see what the HTTP API shows their role: no write-gate reports,
//     no gate scores.
// DB does not authenticate: the application says who acts (WriteContext, ReadContext), and the
// role decides the admin-only calls as in the HTTP API. Namespaces are hard partitions.
// Bad input returns InvalidArgument and changes nothing. Thread-safe.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/entry.h"
#include "bulwark/options.h"
#include "bulwark/reports.h"

namespace bulwark {

// What a caller may do, as the HTTP API's roles: readers read, writers also write (their own
// entries), admins also review quarantine, purge, see reports and write "system" entries.
enum class CallerRole { kReader, kWriter, kAdmin };

// Who writes. `principal` (required) becomes the entry's signed principal and the actor of its
// history events.
struct WriteContext {
  std::string principal;
  Source source = Source::kUser;  // kSystem needs kAdmin
  std::string session;            // the agent session, may be empty
  CallerRole role = CallerRole::kWriter;
};

// Who reads. `principal` and `session` key the honeypot monitor (a blocked caller gets
// PermissionDenied "session_blocked").
struct ReadContext {
  std::string principal;
  std::string session;
  CallerRole role = CallerRole::kReader;
};

// A memory to add. `metadata` is data, not configuration: a JSON object stored and signed with
// the entry (members whose name starts with "bulwark." are reserved).
struct NewMemory {
  std::string text;
  nlohmann::json metadata = nlohmann::json::object();
  std::optional<int64_t> expires_at_us;  // never returned from then on; must be in the future
};

struct QueryOptions {
  int k = 5;                         // hits wanted; 1 .. 1000
  bool include_quarantined = false;  // operators reviewing quarantine; needs kAdmin
  // Exact-match filter on top-level metadata members (data: e.g. {"category": "calendar"}).
  nlohmann::json metadata_filter = nlohmann::json::object();
  // Smooth this search (overrides RetrievalOptions::smoothing).
  std::optional<SmoothingSettings> smoothing;
};

// The query gate's verdict on a search (doc/api.md, "POST /v1/memories/search").
struct QueryGateOutcome {
  enum class Decision { kOff, kNoGate, kPass, kFlag, kEscalate, kStrip };
  Decision decision = Decision::kOff;
  bool flagged = false;
  // Admins only (others get 0, as in the HTTP API): the score and the namespace's threshold.
  double score = 0;
  double threshold = 0;
};

// A smoothed answer (SMSR): the majority answer of `runs` responders over random subsets, and
// its certificate delta[t-1]: the bound on the probability that t poisoned candidates changed it.
struct SmoothedAnswerSummary {
  bool abstained = true;
  std::string answer;  // empty when abstained
  std::string reason;  // why it abstained
  int majority_runs = 0;
  int runs = 0;
  std::vector<double> delta;
};

struct SearchResponse {
  std::vector<SearchHit> hits;  // verified, active (or quarantined when asked), never honeypots
  int k = 0;                    // hits asked for (more when the gate escalated)
  QueryGateOutcome gate;
  std::optional<SmoothedAnswerSummary> smoothed;
  int withheld_candidates = 0;  // candidates dropped because they failed verification
};

class DB {
 public:
  // Creates a new store in `dir` (created if absent) with a new keyring (unless
  // options.keyring_path names an existing one). AlreadyExists if `dir` holds a store;
  // InvalidArgument for bad options (named).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DB>> Create(const std::filesystem::path& dir,
                                                                  const Options& options);
  // Opens an existing store. NotFound if there is none; FailedPrecondition if the embedder's
  // vectors differ from the store's; DataLoss for a damaged store or keyring.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<DB>> Open(const std::filesystem::path& dir,
                                                                const Options& options);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB();

  // Adds one memory through the write pipeline. Returns the stored entry: state kActive, or
  // kQuarantined when the write gate flagged it. PermissionDenied for a reader, or source kSystem
  // without kAdmin.
  [[nodiscard]] virtual absl::StatusOr<Entry> Add(const WriteContext& context, std::string_view name_space,
                                                  const NewMemory& memory) = 0;
  // Adds all memories in one transaction, or none; InvalidArgument names the first bad one.
  [[nodiscard]] virtual absl::StatusOr<std::vector<Entry>> AddBatch(const WriteContext& context,
                                                                    std::string_view name_space,
                                                                    std::span<const NewMemory> memories) = 0;

  // The defended search. PermissionDenied "query_rejected" when the namespace's gate rejects the
  // query, "session_blocked" for a caller the honeypot monitor blocked, or include_quarantined
  // without kAdmin; InvalidArgument for a bad query or options.
  [[nodiscard]] virtual absl::StatusOr<SearchResponse> Search(const ReadContext& context,
                                                              std::string_view name_space,
                                                              std::string_view query,
                                                              const QueryOptions& options) = 0;
  // The verified entry (any state). NotFound if absent, expired, a honeypot or in another
  // namespace; InvalidArgument for a malformed id; DataLoss if it fails verification.
  [[nodiscard]] virtual absl::StatusOr<Entry> Get(const ReadContext& context, std::string_view name_space,
                                                  std::string_view id) = 0;
  // Its signed history, oldest first (an event that fails verification has verified = false and
  // no detail). NotFound as Get.
  [[nodiscard]] virtual absl::StatusOr<std::vector<HistoryEvent>> History(const ReadContext& context,
                                                                          std::string_view name_space,
                                                                          std::string_view id) = 0;

  // Changes text and/or metadata, through the write pipeline again (so a change the gate flags
  // is quarantined). Only the entry's principal or an admin may (PermissionDenied otherwise).
  [[nodiscard]] virtual absl::StatusOr<Entry> Update(const WriteContext& context, std::string_view name_space,
                                                     std::string_view id, const EntryUpdate& update) = 0;
  // Soft delete (kept in storage and history, never retrieved); same rights as Update.
  [[nodiscard]] virtual absl::Status Delete(const WriteContext& context, std::string_view name_space,
                                            std::string_view id) = 0;
  // GDPR erasure of text, metadata and embedding, in the entry and its history. kAdmin.
  [[nodiscard]] virtual absl::Status Purge(const WriteContext& context, std::string_view name_space,
                                           std::string_view id) = 0;

  // Quarantine review, kAdmin: the namespace's quarantined memories (oldest first, at most
  // `limit`, 1 .. 10000); release (quarantined -> active); reject (quarantined -> deleted).
  // FailedPrecondition for an entry that is not quarantined.
  [[nodiscard]] virtual absl::StatusOr<std::vector<Entry>> ListQuarantined(const ReadContext& context,
                                                                           std::string_view name_space,
                                                                           size_t limit) = 0;
  [[nodiscard]] virtual absl::Status Release(const WriteContext& context, std::string_view name_space,
                                             std::string_view id) = 0;
  [[nodiscard]] virtual absl::Status Reject(const WriteContext& context, std::string_view name_space,
                                            std::string_view id) = 0;

  // Checks every row and history event of the store and the signed query gates.
  [[nodiscard]] virtual absl::StatusOr<VerifyReport> Verify() = 0;
  [[nodiscard]] virtual absl::StatusOr<StoreStats> Stats() = 0;
  // Adds a new newest signing key; later writes use it, older entries still verify. Returns its
  // id.
  [[nodiscard]] virtual absl::StatusOr<uint32_t> RotateSigningKey() = 0;
};

}  // namespace bulwark
