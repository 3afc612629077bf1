// Forwarding the searches' query embeddings to the namespace's leader (issue #17 point 2;
// doc/scale-out.md, "The write gate's state on takeover"). MemSAD's rolling query history H is the
// write gate's per-namespace state and lives on the namespace's leader, which scores its writes
// against it; for a namespace the honeypot monitor does not observe, any holder serves a search.
// So that H holds every search of the namespace, as one server's does:
//
//   - QueryHistoryForwarder (on every replica): the write gate's query route
//     (WriteDefenses::SetQueryRoute). A search of a namespace this replica leads joins its H at
//     once; any other search's embedding is queued (Offer returns at once: the search never waits
//     for the network) and a sender thread sends the queue every flush_every or as soon as
//     flush_at queries wait, one POST per leader of at most kSendChunk queries, in arrival order.
//     The leader of each namespace is ReplicaCoordinator::RouteWrite's (as for a write: with no
//     live lease the preferred replica takes it); when that is this replica, the queries join
//     its H directly. A batch that was not delivered (no answer, a refusal, or a namespace the
//     receiver no longer leads) is queued again for the leader RouteWrite names next, at most
//     max_attempts times in all. The queue holds at most max_queued queries: beyond, the oldest
//     are dropped, counted in bulwark_query_history_forward_dropped_total (no namespace label).
//     A follower keeps no H of its own while forwarding (it does not lead).
//   - QueryHistoryReceiver (on every replica): the internal route POST /internal/v1/query-history.
//     It is not an API route: no API key opens it. The batch is authenticated by a MAC under a
//     key derived from the group's shared keyring, with a timestamp and a nonce against replays
//     (query_history_batch.h): 401 for a bad or missing MAC, a stale timestamp or a nonce seen
//     before; 400 for a malformed batch, an embedding of another dimension or a non-finite value;
//     nothing of a refused batch is appended. Of a valid batch, the queries of namespaces this
//     replica leads (serve: or whose free lease it takes, as for a forwarded write) join their H
//     in the batch's order; the others are not appended and are named in the answer's
//     "not_leader", so the sender asks for the leader again.
//
// What remains different from one server: a forwarded query reaches H up to flush_every (plus one
// request) after its search; the queue a replica has not sent yet is lost on its kill -9; beyond
// max_queued (a leader unreachable for long) the oldest queries are dropped and counted.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/status/statusor.h>
#include <absl/synchronization/mutex.h>
#include <absl/time/time.h>
#include <httplib.h>

#include <atomic>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bulwark/env.h"
#include "provenance/keyring.h"
#include "replication/replica_coordinator.h"
#include "server/metrics.h"
#include "server/query_history_batch.h"
#include "server/service.h"

namespace bulwark::server {

inline constexpr char kQueryHistoryRoute[] = "/internal/v1/query-history";

// Appends a query embedding to a namespace's H on this replica (WriteDefenses::AppendQuery).
using AppendQueryFn = std::function<void(std::string_view name_space, std::span<const float> embedding)>;

struct QueryForwardingOptions {
  size_t max_queued = 4096;                             // queries waiting; beyond, the oldest are dropped
  size_t flush_at = 64;                                 // send at once when this many wait
  absl::Duration flush_every = absl::Milliseconds(50);  // else at least this often
  absl::Duration send_timeout = absl::Seconds(2);       // connect + answer of one batch
  int max_attempts = 3;                                 // sends of one query before it is dropped
};

class QueryHistoryForwarder {
 public:
  // Queries sent per request (well under the server's 1 MiB body limit at dimension 1024).
  static constexpr size_t kSendChunk = 64;

  // `coordinator` returns the replica's coordinator, or null before it is attached (queries then
  // stay here). `append_local` appends to this replica's H. `env` (not owned) gives the batches'
  // time and nonces. Starts the sender thread.
  QueryHistoryForwarder(QueryForwardingOptions options, const HmacKey& key,
                        std::function<ReplicaCoordinator*()> coordinator, AppendQueryFn append_local,
                        Env* env);
  // Stop().
  ~QueryHistoryForwarder();
  QueryHistoryForwarder(const QueryHistoryForwarder&) = delete;
  QueryHistoryForwarder& operator=(const QueryHistoryForwarder&) = delete;

  // The write gate's query route: false (keep the query here) when this replica leads the
  // namespace now or has no coordinator yet; else queues it and returns true. Never waits for
  // the network or for a lease being taken. Thread-safe.
  bool Offer(std::string_view name_space, std::span<const float> embedding);
  // Sends what is queued once more (each leader within send_timeout), then stops the thread.
  // Idempotent.
  void Stop();

  // For /metrics (no namespace labels).
  std::vector<Sample> Samples() const;
  uint64_t forwarded() const { return forwarded_.load(); }
  uint64_t dropped() const { return dropped_.load(); }

 private:
  struct Queued {
    std::string name_space;
    std::vector<float> embedding;
    int attempts = 0;
  };
  void SendLoop();
  // Routes and sends `items` (oldest first); what was not delivered is queued again.
  void Flush(std::vector<Queued> items);
  // Sends `items` to the replica at `url` in chunks; returns the items not delivered.
  std::vector<Queued> SendTo(const std::string& url, std::vector<Queued> items,
                             ReplicaCoordinator* coordinator);
  // One chunk: whether it was delivered; `not_leader` gets the namespaces the receiver refused.
  bool SendChunk(httplib::Client& client, const std::string& url, std::span<const Queued> chunk,
                 const std::string& from, std::vector<std::string>* not_leader);
  // Puts `items` back at the front of the queue (they are older than what waits), dropping those
  // that used their attempts and the oldest beyond max_queued.
  void Requeue(std::vector<Queued> items);
  void DropOldestLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const QueryForwardingOptions options_;
  const HmacKey key_;
  const std::function<ReplicaCoordinator*()> coordinator_;
  const AppendQueryFn append_local_;
  Env* const env_;

  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> forwarded_{0};  // queries a leader appended (or this replica, as leader)
  std::atomic<uint64_t> dropped_{0};
  std::thread thread_;
};

class QueryHistoryReceiver {
 public:
  // `dimension`: the store's embedding dimension. `leads` says whether this replica leads a
  // namespace now (serve: ReplicaCoordinator::RouteWrite as for a forwarded write, which takes a
  // free lease; false before the coordinator is attached). `env`
  // (not owned) is the clock the batches' timestamps are checked against.
  QueryHistoryReceiver(const HmacKey& key, size_t dimension, std::function<bool(std::string_view)> leads,
                       AppendQueryFn append, Env* env);

  // POST /internal/v1/query-history (see the file comment): 200 {"appended": n, "not_leader":
  // [namespaces]}, or 401 / 400 with nothing appended. Thread-safe.
  Reply Handle(const httplib::Request& request);
  // The route (public: the MAC authenticates it; no audit record: the searches were audited
  // where they ran). This object must outlive the server.
  RouteSpec Route();

  std::vector<Sample> Samples() const;
  uint64_t received() const { return received_.load(); }
  uint64_t refused() const { return refused_.load(); }

 private:
  // Records a batch's nonce; false if it was seen within the skew window (a replay).
  bool FreshNonce(const std::string& nonce, int64_t now_us);

  const HmacKey key_;
  const size_t dimension_;
  const std::function<bool(std::string_view)> leads_;
  const AppendQueryFn append_;
  Env* const env_;
  absl::Mutex nonce_mu_;
  absl::flat_hash_set<std::string> nonces_ ABSL_GUARDED_BY(nonce_mu_);
  std::deque<std::pair<int64_t, std::string>> nonce_order_ ABSL_GUARDED_BY(nonce_mu_);  // (arrival, nonce)
  std::atomic<uint64_t> received_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace bulwark::server
