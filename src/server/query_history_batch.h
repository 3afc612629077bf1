// QueryBatch: the wire format of the searches' query embeddings one replica sends to a namespace's
// leader, so that the leader's MemSAD query history H holds every search of the namespace, as one
// server's does (issue #17 point 2; doc/scale-out.md, "The write gate's state on takeover"; the
// sender and the route are in query_history_forwarding.h).
//
// A batch is a binary body (Content-Type: application/octet-stream; integers little-endian):
//   "BWQB", version (1 byte, 1), from (2-byte length + the sender's incarnation), sent_us (8 bytes,
//   the sender's clock), nonce (16 random bytes), dimension (4 bytes), count (4 bytes), then
//   count x (namespace: 2-byte length + bytes; dimension float32s)
// with the queries in the order the sender served them (raw floats: a JSON body with base64
// strings cost the leader 20 us per query to parse at dimension 384), and a MAC in the header
// `Bulwark-Replica-Mac: <64 hex>` = HMAC-SHA256(K, "bulwark.query-batch.v1\n" || body), where
// K = HMAC-SHA256(keyring key 1, "bulwark.replica.query-history.v1"). Every replica of a group
// reads the same keyring (--keyring), so every replica derives the same K; key 1 never changes,
// so a signing-key rotation does not change K. An API caller has no keyring and cannot make a
// batch a leader accepts.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "provenance/keyring.h"

namespace bulwark::server {

inline constexpr char kReplicaMacHeader[] = "Bulwark-Replica-Mac";
// The most queries one batch may carry (the sender sends at most this many per request).
inline constexpr size_t kMaxQueriesPerBatch = 256;
// A batch whose sent_us is further than this from the receiver's clock is refused (replay bound).
inline constexpr int64_t kMaxBatchSkewUs = 30'000'000;

struct ForwardedQuery {
  std::string name_space;
  std::vector<float> embedding;
};

struct QueryBatch {
  std::string from;     // the sender's incarnation (for logs)
  int64_t sent_us = 0;  // the sender's clock when it sent the batch
  std::string nonce;    // 32 hex characters (16 bytes), fresh per batch
  std::vector<ForwardedQuery> queries;
};

// K above: the batches' MAC key. FailedPrecondition if the keyring has no key 1.
[[nodiscard]] absl::StatusOr<HmacKey> QueryBatchKey(const Keyring& keyring);

// A batch's body and the value of its MAC header.
struct SealedBatch {
  std::string body;
  std::string mac;  // 64 hex characters
};
// Encodes and seals `batch` (the dimension written is the first query's; a query of another size
// makes a batch OpenQueryBatch refuses). InvalidArgument for a nonce that is not 32 hex; Internal
// if OpenSSL fails.
[[nodiscard]] absl::StatusOr<SealedBatch> SealQueryBatch(const QueryBatch& batch, const HmacKey& key);

// Opens a received batch: checks the MAC (constant time) before reading anything, then the format
// (every length against what is left), the clock skew against `now_us`, the batch size and every
// query (a valid namespace name; an embedding of exactly `dimension` finite floats; no bytes after
// the last). Nothing is returned unless all of it holds.
// Unauthenticated for a missing or wrong MAC or a sent_us outside kMaxBatchSkewUs; InvalidArgument
// for a malformed batch, more than kMaxQueriesPerBatch queries, a bad namespace, an embedding of
// another dimension or a non-finite value (the message names the query's index).
[[nodiscard]] absl::StatusOr<QueryBatch> OpenQueryBatch(std::string_view body, std::string_view mac,
                                                        const HmacKey& key, int64_t now_us, size_t dimension);

}  // namespace bulwark::server
