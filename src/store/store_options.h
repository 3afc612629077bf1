// The internal MemoryStore's options (store/memory_store.h): how a store is opened, with the JSON
// configurations of its embedder, write gate and retrieval, and how one search runs. The public
// API's typed options (bulwark/options.h) are translated into these by DB (api/db_options.cc).
// Every field states its default.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "bulwark/embedder.h"
#include "bulwark/env.h"

namespace bulwark {

struct SearchObservation;  // src/store/entry_store.h (internal: the honeypot monitor's observation)

struct StoreOptions {
  // Embedder configuration (see CreateEmbedder). Create: null means {"kind": "lexical"}. Open:
  // null means the configuration the store was created with; otherwise the embedder it builds
  // must have the store's fingerprint. Default: null.
  nlohmann::json embedder_config;
  // An embedder instance to use instead of embedder_config (tests, custom embedders). Its
  // fingerprint is checked like any other.
  std::shared_ptr<const Embedder> embedder;

  // Write-gate configuration (doc/write_gate.md: which detectors run, their parameters). Null:
  // <store dir>/gate.json if it exists, else the defaults.
  nlohmann::json write_gate_config;

  // Ranking of searches (issue #19, doc/retrieval.md): "default" is the ranking of namespaces
  // without their own setting ("hybrid" lexical + vector, the default, or "vector"; per namespace:
  // `bulwark retrieval set`), the rest tunes hybrid ranking (store/hybrid_ranking.h). Null: the
  // defaults.
  nlohmann::json retrieval_config;

  // Keyring file. Default (empty): <store dir>/keyring.json.
  std::filesystem::path keyring_path;

  size_t max_text_bytes = 16 * 1024;      // per entry and per query; 1 .. 16 MiB
  size_t max_metadata_bytes = 16 * 1024;  // compact JSON dump of the metadata object
  size_t max_batch_entries = 100'000;     // entries in one AddBatch

  // Writes by other processes to the same store (e.g. `bulwark add` or `bulwark quarantine
  // release` while `bulwark serve` runs): a search first looks, at most this often, for history
  // events it has not seen and brings the index up to date with the entries they name. 0: before
  // every search; negative: never (the index then follows only this process's writes).
  int other_writers_check_ms = 100;

  // False: the store's vectors are held per namespace (EntryStore::HoldNamespace); the open loads
  // none. A replica of a replica group holds only the namespaces placed on it (doc/scale-out.md,
  // "Placement").
  bool hold_all_namespaces = true;

  // The index snapshot (StoreLayout::index_snapshot(), store/index_snapshot.h) is written when a
  // store whose index holds at least this many rows closes after an open that found no usable
  // snapshot, or after a tenth of its rows changed since the one it read; a negative value: never
  // read or written.
  int64_t index_snapshot_min_rows = 10'000;

  Env* env = nullptr;  // default: Env::Default()
};

struct SearchOptions {
  int k = 5;  // results wanted; 1 .. 1000
  // Return entries in these states too (operators reviewing quarantine). Default: active only.
  bool include_quarantined = false;
  // Exact-match filters on top-level metadata fields, e.g. {"category": "calendar"}. An entry
  // passes when every key is present with an equal value.
  nlohmann::json metadata_filter = nlohmann::json::object();
  // The query's embedding, when the caller has already computed it with this store's embedder
  // (the read-time defenses do, to score the query); Search then does not embed it again. Not
  // owned; must have the embedder's dimension. Default: null (Search embeds the query).
  const std::vector<float>* query_embedding = nullptr;
  // Append the query to the namespace's query history (MemSAD's rolling history H, which the
  // write gate scores new entries against, and which `bulwark gate fit --from-history` fits on).
  // The defended retriever turns this off for queries its query gate flagged, so that neither
  // learns from traffic that looked like an attack.
  bool record_query = true;
  // Internal (the honeypot guard, src/retrieval/honeypot_guard.h): when set, the search also
  // fills in the MemPot observation of the query from its own index scan. Not owned. Default null.
  SearchObservation* observation = nullptr;
};

}  // namespace bulwark
