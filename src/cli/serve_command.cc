// `bulwark serve`: the HTTP JSON service (server/serve.h) on the store of --store, with the flags
// of server::ServeOptions. See serve_command.h.
#include "cli/serve_command.h"

#include <nlohmann/json.hpp>

namespace bulwark::cli {

namespace {

// Several replicas over one PostgreSQL store (doc/scale-out.md, "Replicas in bulwark serve").
void AddReplicationFlags(CLI::App* serve, server::ReplicationFlags& rf) {
  serve->add_option("--replica-id", rf.replica_id,
                    "join the replica group of a PostgreSQL store under this id (unique per replica)");
  serve->add_option("--advertise", rf.advertise,
                    "the URL the other replicas reach this one at (default: the listening URL)");
  serve->add_option("--replication-factor", rf.copies, "R: the replicas each namespace is placed on")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  serve->add_option("--lease-ttl-ms", rf.lease_ttl_ms, "a namespace leader's lease; the takeover time bound")
      ->capture_default_str()
      ->check(CLI::Range(1000, 600'000));
  serve
      ->add_option("--min-version-wait-ms", rf.min_version_wait_ms,
                   "the longest a read waits for its Bulwark-Min-Version")
      ->capture_default_str()
      ->check(CLI::Range(0, 60'000));
  serve
      ->add_option("--forward-timeout-ms", rf.forward_timeout_ms,
                   "timeout of a write forwarded to the leader")
      ->capture_default_str()
      ->check(CLI::Range(100, 60'000));
  serve
      ->add_option("--forward-query-history", rf.forward_query_history,
                   "send the query of a search of a namespace led elsewhere to its leader's query history")
      ->capture_default_str();
}

}  // namespace

void ServeCommand::Register(CLI::App& app) {
  server::ServerOptions& so = options_.server;
  serve_ = app.add_subcommand(
      "serve", "run the HTTP JSON service (creates the store and an admin key on first start)");
  serve_->add_option("--host", so.host, "listen address")->capture_default_str();
  serve_->add_option("--port", so.port, "listen port; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  serve_->add_option("--threads", so.threads, "worker threads (each runs one complete request at a time)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  serve_
      ->add_option("--max-queue", so.max_queued_connections,
                   "complete requests waiting for a worker before new ones get 503")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  serve_->add_option("--max-body-bytes", so.max_body_bytes, "largest request body; larger ones get 413")
      ->capture_default_str()
      ->check(CLI::Range(1024, 64 << 20));
  serve_->add_option("--max-k", so.limits.max_k, "largest search k")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  serve_->add_option("--max-batch", so.limits.max_batch_entries, "most entries in one batch add")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  serve_
      ->add_option("--rate", so.rate_per_second,
                   "requests per second per API key (token bucket refill); 0 disables")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  serve_->add_option("--burst", so.burst, "token bucket size per API key")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e9));
  serve_
      ->add_option("--admin-name", options_.admin_name, "name of the admin principal created on first start")
      ->capture_default_str();
  serve_->add_flag("--insecure-dev", so.insecure_dev,
                   "DEVELOPMENT ONLY: requests without a key act as admin (loopback only)");
  serve_
      ->add_option("--log-format", options_.log_format,
                   "log lines: text, or json (one object per line, OpenTelemetry field names)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  serve_->add_option("--llm", llm_json_,
                     R"(LLM of the llm responder and judge as JSON {"url", "model", "api_key_env", ...}; )"
                     "default from $BULWARK_LLM_URL, $BULWARK_LLM_MODEL, $BULWARK_LLM_API_KEY");
  serve_
      ->add_option("--honeypot-mode", options_.honeypot_mode,
                   "honeypot monitor: off | monitor (record blocks) | block (refuse blocked sessions)")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "monitor", "block"}));
  serve_->add_option("--expiry-sweep-ms", options_.expiry_sweep_ms, "purge expired entries every N ms")
      ->capture_default_str()
      ->check(CLI::Range(10, 86'400'000));
  serve_->add_option("--max-nruns", so.limits.max_smoothing_runs, "largest smoothing nruns")
      ->capture_default_str()
      ->check(CLI::Range(1, 101));
  AddReplicationFlags(serve_, options_.replication);
}

std::optional<int> ServeCommand::Run(const CommandEnv& env) {
  if (!serve_->parsed()) return std::nullopt;
  server::ServeOptions options = options_;
  if (!llm_json_.empty()) {
    options.llm = nlohmann::json::parse(llm_json_, nullptr, false);
    if (!options.llm.is_object())
      return FailCommand(env, absl::InvalidArgumentError("--llm must be a JSON object"));
  }
  options.store_dir = env.store;
  options.store = env.store_options;
  options.json = env.json;
  return server::RunServe(options, env.out, env.err);
}

}  // namespace bulwark::cli
