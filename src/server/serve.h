// `bulwark serve`: everything between the command line and a running HttpServer. Opens the store
// (creating it, its keyring and a first admin principal on first start), refuses to run without an
// active admin unless --insecure-dev, prints the listening address, and serves until SIGINT or
// SIGTERM.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "server/http_server.h"
#include "store/store_options.h"

namespace bulwark::server {

// Several replicas over one PostgreSQL store (doc/scale-out.md, "Replicas in bulwark serve").
struct ReplicationFlags {
  std::string replica_id;          // empty: a single server, no replication
  std::string advertise;           // the URL the other replicas reach this one at; empty: the listening URL
  int copies = 2;                  // R, the replicas a namespace is placed on (>= 1)
  int lease_ttl_ms = 10'000;       // a dead leader's namespaces are taken over after at most this long
  int min_version_wait_ms = 2000;  // the longest a read waits for its Bulwark-Min-Version
  int forward_timeout_ms = 5000;   // connect + answer of a write forwarded to the leader
  // Searches of a namespace led elsewhere send their query embedding to the leader's MemSAD query
  // history (query_history_forwarding.h). Off: each replica's searches feed its own.
  bool forward_query_history = true;
};

struct ServeOptions {
  std::filesystem::path store_dir;
  StoreOptions store;  // keyring path, text limits; embedder config for a new store
  ServerOptions server;
  std::string admin_name = "admin";  // the principal created on first start
  bool json = false;                 // startup lines as JSON objects, one per line
  // The LLM of the llm responder and equivalence judge (ChatClient::FromConfig). Null: configured
  // from $BULWARK_LLM_URL / $BULWARK_LLM_MODEL / $BULWARK_LLM_API_KEY when the URL is set, else
  // none (extractive responder, embedding equivalence).
  nlohmann::json llm;
  // The honeypot monitor's mode for every namespace (HoneypotGuard): off | monitor | block.
  std::string honeypot_mode = "monitor";
  // Log lines on stderr: "text" or "json" (log_format.h).
  std::string log_format = "text";
  // How often the expiry sweeper purges expired entries (store/expiry_sweeper.h).
  int expiry_sweep_ms = 60'000;
  ReplicationFlags replication;
};

// Runs the service; returns the process exit code: 0 after a clean stop, 1 if the store, the
// registry or the listening socket failed or no admin exists, 2 for a refused configuration
// (--insecure-dev on a non-loopback host).
//
// Lines printed on `out` (tests and scripts parse them; with `json` each is one JSON object with
// an "event" field: "store_created", "admin_created", "listening", "stopped"):
//   created store DIR (embedder ..., signing key N)
//   created admin principal "admin"; its API key is shown once, store it now:
//     bwk_<key_id>_<secret>
//   listening on http://HOST:PORT
//   replica ID at URL (R copies)     (with --replica-id; JSON event "replica")
// With --replica-id the store must be a PostgreSQL store (exit code 2 otherwise).
int RunServe(const ServeOptions& options, std::ostream& out, std::ostream& err);

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);

}  // namespace bulwark::server
