// EntryStore (see entry_store.h): starting the open from an index snapshot (store/index_snapshot.h)
// and writing one.
//
// Why a snapshot cannot hide an entry (or show one that is not there):
//   * Only a process holding the store's keyring can make a file that passes the MAC; anything
//     else (changed bytes, truncation, another dimension or version) is refused and the open scans
//     the rows as without a snapshot.
//   * An authentic snapshot lists every indexable row up to its seq (it is written from the index
//     after catching up with every writer, under the lock that orders changes). Its seq must not be
//     past the store's newest event, and every event after it is applied from the history, which
//     is signed and chained (the chain head is checked by every open before this runs: events
//     cannot be removed unnoticed). So a stale snapshot ends up as current as a fresh scan.
//   * Each namespace's row count in the store must not be below the count the snapshot recorded
//     (rows are never deleted, only their state changes), and must equal it when no event came
//     after the seq; then the chain link of the seq's event must equal the recorded one too, which
//     ties the file to this store's history (not a copy's that diverged).
//   * Searches read back and verify every hit against its signed row, as always: a snapshot can
//     at worst rank a row that then fails verification and is withheld.
#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "index/flat_index.h"
#include "provenance/keyring.h"
#include "store/entry_store.h"
#include "store/index_snapshot.h"
#include "store/namespace_index.h"

namespace bulwark {
namespace {

// A snapshot more than this many events behind the store is not used: re-reading each entry
// changed after it costs more than a scan.
int64_t MaxEventsBehind(int64_t total_rows) { return std::max<int64_t>(1'000, total_rows / 4); }

// What a probe text's lexical terms are (the snapshot's SnapshotLexicalOptions::terms): a BM25
// index written by a process that tokenized otherwise (other options, another stemmer or
// tokenizer version) is not restored. Empty with WordNet concepts, glosses or the thesaurus on:
// their terms come from data files the probe would not cover, so those BM25 indexes are built
// from the rows.
std::string LexicalTermsOf(const LexicalTerms& terms) {
  if (terms.concepts_enabled() || terms.glosses_enabled() || terms.thesaurus_enabled()) return "";
  static constexpr std::string_view kProbe =
      "What did the Runners' running club decide? It's 3.5km at 07:30 -- e-mail ana@x.org, "
      "don't be late: Café Größe naïve résumé STOP the and of I NASA v2.1 #tag";
  std::string out = "bulwark.lexical.v1";
  for (const std::string& t : terms.Document(kProbe)) absl::StrAppend(&out, "\x1f", ToAbsl(t));
  return out.size() <= kMaxSnapshotLexicalTermsBytes ? out : "";
}

// Checks a snapshot read from the file against the store; OK if the open may start from it.
absl::Status CheckAgainstStore(const IndexSnapshot& snapshot, StorageBackend& backend,
                               const absl::flat_hash_map<std::string, int64_t>& store_rows) {
  BULWARK_ASSIGN_OR_RETURN(const auto newest, backend.NewestLink());
  const int64_t last_seq = newest.first;
  int64_t total_rows = 0;
  for (const auto& [name, rows] : store_rows) total_rows += rows;
  if (snapshot.seq > last_seq) {
    return absl::FailedPreconditionError(
        absl::StrCat("its seq ", snapshot.seq, " is past the store's newest event ", last_seq));
  }
  if (last_seq - snapshot.seq > MaxEventsBehind(total_rows)) {
    return absl::FailedPreconditionError(absl::StrCat("it is ", last_seq - snapshot.seq, " events behind"));
  }
  const bool current = snapshot.seq == last_seq;
  if (current && snapshot.link != newest.second.link) {
    return absl::FailedPreconditionError("its history link differs from the store's (another history)");
  }
  absl::flat_hash_map<std::string, int64_t> recorded;
  for (const SnapshotNamespace& ns : snapshot.namespaces) recorded[ns.name] = ns.store_rows;
  for (const auto& [name, rows] : recorded) {
    const auto it = store_rows.find(name);
    const int64_t now = it == store_rows.end() ? 0 : it->second;
    if (now < rows || (current && now != rows)) {
      return absl::FailedPreconditionError(
          absl::StrCat("namespace ", name, " has ", now, " rows in the store, ", rows, " in the snapshot"));
    }
  }
  if (current) {
    for (const auto& [name, rows] : store_rows) {
      if (rows > 0 && !recorded.contains(name)) {
        return absl::FailedPreconditionError(absl::StrCat("namespace ", name, " is missing"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool EntryStore::LoadSnapshot(const absl::flat_hash_map<std::string, int64_t>& expected_rows,
                              std::vector<int64_t>* pot_rows) {
  if (options_.snapshot_path.empty()) return false;
  const std::string lexical_terms = LexicalTermsOf(terms_);
  absl::StatusOr<IndexSnapshot> snapshot = ReadIndexSnapshot(
      options_.snapshot_path, options_.dimension, *keyring_,
      [&](std::string_view name, size_t rows) {
        const auto it = expected_rows.find(ToAbsl(name));
        return std::max(rows, it == expected_rows.end() ? size_t{0} : static_cast<size_t>(it->second));
      },
      {.terms = lexical_terms});
  absl::Status usable = snapshot.status();
  if (usable.ok()) usable = CheckAgainstStore(*snapshot, *backend_, expected_rows);
  if (!usable.ok()) {
    if (!absl::IsNotFound(usable)) {
      spdlog::warn("the index snapshot {} is not used, the index is built from the store: {}",
                   options_.snapshot_path.string(), usable.ToString());
    }
    return false;
  }
  for (SnapshotNamespace& ns : snapshot->namespaces) {
    NamespaceIndex* index = IndexFor(ns.name, 0, /*from_open=*/true);
    const FlatIndex::ConstParts parts = ns.vectors->Parts();
    for (size_t p = 0; p < parts.kinds.size(); ++p) {
      if (static_cast<Kind>(parts.kinds[p]) != Kind::kHoneypot) continue;
      index->honeypots.insert(parts.row_ids[p]);
      pot_rows->push_back(parts.row_ids[p]);
    }
    index->vectors = std::move(ns.vectors);
    if (ns.lexical.has_value()) {  // read on first use; the rows changed from here on are noted
      index->lexical_in_snapshot = std::move(ns.lexical);
      ++open_report_.lexical_from_snapshot;
    }
  }
  for (const RowVersion& v : snapshot->row_versions) NoteVersion(v.row_id, v.version);
  seen_event_seq_ = snapshot->seq;
  own_event_seqs_.clear();
  spdlog::info("index loaded from the snapshot at seq {}", snapshot->seq);
  return true;
}

bool EntryStore::RestoreLexicalLocked(NamespaceIndex& index) {
  const SnapshotLexicalSection section = *std::move(index.lexical_in_snapshot);
  index.lexical_in_snapshot.reset();
  std::vector<int64_t> changed(index.lexical_changed.begin(), index.lexical_changed.end());
  index.lexical_changed = {};
  absl::StatusOr<Bm25Index> lexical = ReadSnapshotLexical(section, *keyring_, options_.hybrid.bm25);
  if (!lexical.ok()) {
    spdlog::warn("a BM25 index of the index snapshot is not used, it is built from the store: {}",
                 lexical.status().ToString());
    return false;
  }
  // The rows changed since the snapshot's seq: out, then back in (in row order, as a build adds
  // them) if the vector index holds them as active memories now, with their text from storage.
  std::sort(changed.begin(), changed.end());
  std::vector<int64_t> wanted;
  for (const int64_t row_id : changed) {
    lexical->Remove(row_id).IgnoreError();  // it may not be there
    if (index.vectors->StateOf(row_id) == std::pair{State::kActive, Kind::kMemory}) wanted.push_back(row_id);
  }
  constexpr size_t kBatch = 256;  // rows per storage read
  for (size_t i = 0; i < wanted.size(); i += kBatch) {
    absl::StatusOr<std::vector<std::optional<StoredRow>>> rows =
        backend_->GetRows(std::span<const int64_t>(wanted).subspan(i, std::min(kBatch, wanted.size() - i)));
    if (!rows.ok()) {
      spdlog::warn("the BM25 index of the snapshot cannot be brought up to date: {}",
                   rows.status().ToString());
      return false;
    }
    for (const std::optional<StoredRow>& row : *rows) {
      if (row.has_value()) lexical->Add(row->row_id, terms_.Document(row->entry.text)).IgnoreError();
    }
  }
  index.lexical = *std::move(lexical);
  index.lexical_built = true;
  ++open_report_.lexical_restored;
  return true;
}

absl::StatusOr<uint64_t> EntryStore::WriteSnapshot() {
  if (options_.snapshot_path.empty())
    return absl::FailedPreconditionError("the store keeps no index snapshot");
  // A replica holds only some namespaces: a snapshot of its index would miss the others.
  if (!options_.hold_all_namespaces)
    return absl::FailedPreconditionError("a replica holding some namespaces keeps no index snapshot");
  if (chain_broken_.load()) return absl::FailedPreconditionError("the history chain is broken");
  RefreshKeyring();
  absl::MutexLock lock(&mu_);
  // The seq and its link must name the newest event the index reflects: catch up until no other
  // writer appended in between (a few tries; a busy store is snapshotted another time).
  std::pair<int64_t, HistoryLink> newest;
  for (int attempt = 0;; ++attempt) {
    BULWARK_RETURN_IF_ERROR(CatchUpLocked());
    BULWARK_ASSIGN_OR_RETURN(newest, backend_->NewestLink());
    if (newest.first == seen_event_seq_) break;
    if (attempt == 3) return absl::UnavailableError("other writers keep appending; no snapshot now");
  }
  BULWARK_ASSIGN_OR_RETURN(const auto counts, backend_->CountRowsByNamespace());
  const std::string lexical_terms = LexicalTermsOf(terms_);
  IndexSnapshotSource source{.seq = seen_event_seq_,
                             .link = newest.second.link,
                             .lexical_terms = lexical_terms,
                             .row_versions = &row_versions_};
  std::vector<std::unique_ptr<FlatIndex>> empties;  // namespaces with rows but nothing indexed
  for (const auto& [name, rows] : counts) {
    const auto it = indexes_.find(name);
    const FlatIndex* vectors = nullptr;
    const Bm25Index* lexical = nullptr;  // namespaces whose BM25 index was never built: none
    if (it != indexes_.end()) {
      vectors = static_cast<const FlatIndex*>(it->second->vectors.get());
      // One the open left in the old file goes into the new one (restored: the old may be gone).
      if (it->second->lexical_in_snapshot.has_value()) RestoreLexicalLocked(*it->second);
      if (it->second->lexical_built) lexical = &it->second->lexical;
    }
    if (vectors == nullptr) {
      BULWARK_ASSIGN_OR_RETURN(empties.emplace_back(), FlatIndex::Create(options_.dimension));
      vectors = empties.back().get();
    }
    source.namespaces.push_back({name, rows, vectors, lexical});
  }
  BULWARK_ASSIGN_OR_RETURN(const uint64_t bytes,
                           WriteIndexSnapshot(options_.snapshot_path, options_.dimension, source, *keyring_));
  changes_since_snapshot_ = 0;
  lexical_built_since_snapshot_ = false;
  return bytes;
}

void EntryStore::MaybeWriteSnapshot() {
  if (options_.snapshot_path.empty() || !options_.hold_all_namespaces || writes_frozen_.load() ||
      chain_broken_.load())
    return;
  {
    absl::ReaderMutexLock lock(&mu_);
    int64_t rows = 0;
    for (const auto& [name, index] : indexes_) rows += static_cast<int64_t>(index->vectors->size());
    if (rows < options_.snapshot_min_rows || rows == 0) return;
    const bool worth = !open_report_.from_snapshot
                           ? changes_since_snapshot_ > 0
                           : changes_since_snapshot_ * 10 >= rows ||
                                 (lexical_built_since_snapshot_ && !LexicalTermsOf(terms_).empty());
    if (!worth) return;
  }
  absl::StatusOr<uint64_t> written = WriteSnapshot();
  if (!written.ok()) {
    spdlog::warn("the index snapshot was not written: {}", written.status().ToString());
  }
}

}  // namespace bulwark
