// IndexSnapshot: the file that lets an open skip the scan of every row (issue #12 point 3,
// open-to-first-search): EntryStore's vector indexes (row ids, states, kinds, float32 rows and their
// int8 copy, by position), the BM25 postings of the namespaces whose lexical index was built (so
// the first hybrid search tokenizes nothing; the open does not read them: ReadSnapshotLexical does,
// at a namespace's first hybrid search, so a vector-ranked namespace never pays for them), and its
// rollback bookkeeping (each row's newest version), as of one history seq. An open reads it (one sequential
// read at disk/memory speed into the final arrays, no decoding, no encoding) and then applies the history
// events committed after that seq from the store, exactly as it catches up with other writers, so the index
// equals one built from the rows.
//
// The file is an UNTRUSTED cache (StoreLayout::index_snapshot()). Anything wrong with it makes the
// reader fail and the open rebuild from the store, never a different index:
//   * a keyed MAC, GMAC (AES-256-GCM over additional data, iv 0) under the file's key
//     K = HMAC(HMAC(keyring key `key_id`, "bulwark.index.snapshot.v1"), the header's random nonce),
//     over every byte before it (the header, the seq and the counts included) except the BM25
//     bodies, checked before anything read is used: a file changed or made without the store's
//     keyring is refused;
//   * each BM25 body has its own digest, GMAC under K with iv 1 + its namespace's position, held
//     in its namespace's record (so under the file's MAC) and checked by ReadSnapshotLexical before
//     Bm25Index::Restore sees a byte: a changed body is refused (that index is built from the
//     rows), the rest is used;
//   * version, byte order, dimension, row stride or int8 block layout unlike this build's: refused;
//   * every count is bounded by the bytes left in the file before anything is allocated, and the
//     file's size is part of the header: a truncated or extended file is refused.
// Entries cannot be hidden by it: a file refused is ignored; an authentic file (made by a process
// holding the key) reflects every row up to its seq, the events after its seq are applied from
// the signed, chained history (the chain head is checked at every open), and EntryStore checks the
// seq, the chain link at the seq and the row count per namespace against the store
// (entry_store_snapshot.cc). Every search hit is still read back and verified against its signed
// row.
//
// Format (version 4, little-endian, doc in bench/RESULTS.md "Index snapshot"; version 1 had no
// BM25 sections, version 2 had them inside the namespace records, version 3 used HMAC-SHA256;
// all are refused):
//   header: "BWIXSNAP", u32 version, u32 byte-order mark 0x01020304, u32 dimension, u32 stride,
//           u32 int8 block rows, u32 key id, 16-byte nonce, i64 seq, u32 link length, 32 link bytes,
//           u64 namespaces, u64 row versions, u64 file size, u32 lexical terms length, its text
//   per namespace: u32 name length, name, i64 rows in the store at seq, u64 indexed rows n,
//           u8 has-int8, n row ids (i64), n states (u8), n kinds (u8), n * stride floats,
//           [int8 arrays: lines, scales, row norms, error norms (Int8Rows::Arrays)],
//           u8 has-BM25, if 1: u64 body offset, u64 body bytes, 16-byte body digest
//   row versions: count x (i64 row id, i64 updated_at_us)
//   BM25 bodies, in namespace order, back to back (index_snapshot_stream.h: the postings by term)
//   16-byte MAC
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "index/bm25_index.h"
#include "index/flat_index.h"
#include "provenance/keyring.h"
#include "store/index_snapshot_row_versions.h"

namespace bulwark {

inline constexpr uint32_t kIndexSnapshotVersion = 4;
// Namespace names longer than this are refused (the store's own limit is far lower).
inline constexpr uint32_t kMaxSnapshotNamespaceBytes = 4096;
// Lexical terms descriptions longer than this are refused.
inline constexpr uint32_t kMaxSnapshotLexicalTermsBytes = 4096;

// Where a namespace's BM25 body is, in a snapshot whose MAC checked: ReadSnapshotLexical reads it.
// Holds the file open (its inode: a snapshot written over it later does not change these bytes).
struct SnapshotLexicalSection {
  std::shared_ptr<const int> fd;  // closed with the last copy
  uint32_t key_id = 0;            // the keyring key the file was MACed with
  std::string nonce;              // the file's (its key's)
  uint32_t iv = 0;                // the body's GMAC iv
  uint64_t offset = 0;
  uint64_t bytes = 0;
  std::array<unsigned char, 16> digest{};
};

// One namespace's part of a snapshot.
struct SnapshotNamespace {
  std::string name;
  int64_t store_rows = 0;  // rows of the namespace in the store (every state) at the seq
  std::unique_ptr<FlatIndex> vectors;
  // The namespace's BM25 index (its active memories' terms), not read yet, if the file holds one
  // and it was made with the lexical terms the reader asked for.
  std::optional<SnapshotLexicalSection> lexical;
};

// A row's newest version (updated_at_us) as the rollback check knows it.
struct RowVersion {
  int64_t row_id = 0;
  int64_t version = 0;
};

struct IndexSnapshot {
  int64_t seq = 0;   // every history event up to it is reflected
  std::string link;  // the history chain link of event `seq` (empty for a store without events)
  std::vector<SnapshotNamespace> namespaces;
  std::vector<RowVersion> row_versions;
  bool lexical_terms_match = false;  // the file's lexical terms were the reader's (and not empty)
};

// What WriteIndexSnapshot writes: borrowed from the caller, which holds them still meanwhile.
struct IndexSnapshotSource {
  int64_t seq = 0;
  std::string_view link;
  struct Namespace {
    std::string_view name;
    int64_t store_rows = 0;
    const FlatIndex* vectors = nullptr;  // not null; of the dimension written
    const Bm25Index* lexical = nullptr;  // null: none written (built from the rows after an open)
  };
  // What the BM25 indexes' terms were made by (SnapshotLexicalOptions::terms); empty: no BM25
  // index is written.
  std::string_view lexical_terms;
  std::vector<Namespace> namespaces;
  const RowVersionTable* row_versions = nullptr;  // not null
};

// Writes `source` to `path` atomically: a temporary file beside it, fsync, rename over `path`,
// fsync of the directory. A crash leaves the old file or none, never a partial one under `path`.
// Signs with the keyring's newest key. Returns the bytes written; FailedPrecondition for an empty
// keyring or a namespace of another dimension; Internal for an I/O or OpenSSL error (the
// temporary file is removed).
[[nodiscard]] absl::StatusOr<uint64_t> WriteIndexSnapshot(const std::filesystem::path& path, int dimension,
                                                          const IndexSnapshotSource& source,
                                                          const Keyring& keyring);

// What the reader expects of the BM25 sections: `terms` names how the documents were tokenized
// (EntryStore: its lexical terms' output for a probe text); a file written with other terms, or an
// empty `terms`, has no section returned (SnapshotNamespace::lexical).
struct SnapshotLexicalOptions {
  std::string_view terms;
};

// Reads the snapshot at `path` for an index of `dimension`; `capacity(name, rows)` gives the rows
// to make room for in a namespace's index (>= rows: the rows added since are appended without
// regrowing). The BM25 bodies are not read (only where they are). NotFound if there is no file;
// FailedPrecondition for another version, byte order, dimension or layout; DataLoss for a file
// that is truncated, bigger than its header says, malformed (BM25 bodies that do not tile the
// bytes between the row versions and the MAC included), signed with a key the keyring lacks, or
// whose MAC does not match. Nothing read is returned unless the whole file checked.
[[nodiscard]] absl::StatusOr<IndexSnapshot> ReadIndexSnapshot(
    const std::filesystem::path& path, int dimension, const Keyring& keyring,
    absl::FunctionRef<size_t(std::string_view name, size_t rows)> capacity,
    const SnapshotLexicalOptions& lexical = {});

// Reads a BM25 body and restores the index it holds, with `options` (they rank with them; the
// postings do not depend on them). Its bytes are checked against the digest before
// Bm25Index::Restore sees them. DataLoss if the body cannot be read, its digest does not match,
// its key is not in `keyring` or Restore refuses it.
[[nodiscard]] absl::StatusOr<Bm25Index> ReadSnapshotLexical(const SnapshotLexicalSection& section,
                                                            const Keyring& keyring,
                                                            const Bm25Options& options);

}  // namespace bulwark
