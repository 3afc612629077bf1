// The `bulwark` command line: the global flags, and `verify` and `stats`. The other subcommands
// are command groups of their own files: init, keys, add, search, get, history, update, delete,
// purge, export (memory_commands.h), calibrate, quarantine and watermark (gate_commands.h), serve
// (serve_command.h), principals and audit (access_commands.h), the read-time defenses
// (read_defense_commands.h), honeypots and sessions (honeypot_commands.h), mcp (mcp_commands.h),
// retrieval (retrieval_commands.h), migrate (migrate_command.h); `bulwark-lab` adds the attacks
// and evaluations (lab.h). Every command that prints results takes --json for machine-readable
// output.
#include "cli/cli.h"

#include <absl/strings/str_cat.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "auth/principal_registry.h"
#include "cli/access_commands.h"
#include "cli/gate_commands.h"
#include "cli/honeypot_commands.h"
#include "cli/mcp_commands.h"
#include "cli/memory_commands.h"
#include "cli/migrate_command.h"
#include "cli/read_defense_commands.h"
#include "cli/retrieval_commands.h"
#include "cli/serve_command.h"
#include "gate/gate_store.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"

namespace bulwark::cli {
namespace {

struct GlobalFlags {
  std::string store = "bulwark-data";
  std::string name_space = "default";
  std::string principal;
  std::string keyring;
  bool json = false;
  size_t max_text_bytes = StoreOptions{}.max_text_bytes;
  int64_t index_snapshot_min_rows = StoreOptions{}.index_snapshot_min_rows;
};

struct Io {
  std::ostream& out;
  std::ostream& err;
};

int Fail(Io io, const absl::Status& status) {
  io.err << "error: " << status.message() << "\n";
  return 1;
}

std::string DefaultPrincipal() {
  const char* user = std::getenv("USER");
  return absl::StrCat("local:", user && *user ? user : "cli");
}

StoreOptions MakeOptions(const GlobalFlags& g) {
  StoreOptions options;
  options.max_text_bytes = g.max_text_bytes;
  options.index_snapshot_min_rows = g.index_snapshot_min_rows;
  if (!g.keyring.empty()) options.keyring_path = g.keyring;
  return options;
}

// --backend URL becomes the store's location. A PostgreSQL store keeps no files, so its keyring
// must be named (--keyring or $BULWARK_KEYRING): InvalidArgument otherwise, or for a --backend
// that is not a PostgreSQL URL.
absl::Status ApplyBackend(const std::string& backend, GlobalFlags* g) {
  if (!backend.empty()) {
    if (!IsPostgresLocation(backend)) {
      return absl::InvalidArgumentError("--backend takes a postgresql:// URL (a directory goes to --store)");
    }
    g->store = backend;
  }
  if (IsPostgresLocation(g->store) && g->keyring.empty()) {
    return absl::InvalidArgumentError(
        "a PostgreSQL store keeps no files: name its keyring with --keyring FILE (or $BULWARK_KEYRING)");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<MemoryStore>> OpenStore(const CommandEnv& env) {
  return MemoryStore::Open(env.store, env.store_options);
}

std::filesystem::path KeyringPath(const CommandEnv& env) {
  return env.keyring.empty() ? StoreLayout(env.store).keyring() : std::filesystem::path(env.keyring);
}

int CmdVerify(const CommandEnv& env) {
  Io io{env.out, env.err};
  auto store = OpenStore(env);
  if (!store.ok()) return Fail(io, store.status());
  auto report = (*store)->Verify();
  if (!report.ok()) return Fail(io, report.status());
  // The access-control rows (principals, API keys) carry tags too.
  auto registry = OpenPrincipalRegistry(env);
  if (!registry.ok()) return Fail(io, registry.status());
  auto access = (*registry)->Verify();
  if (!access.ok()) return Fail(io, access.status());
  auto gates = GateStore::Open(StoreLayout(env.store).database(), KeyringPath(env));
  if (!gates.ok()) return Fail(io, gates.status());
  auto gate_problems = (*gates)->Verify();
  if (!gate_problems.ok()) return Fail(io, gate_problems.status());
  const bool ok = report->ok() && access->ok() && gate_problems->empty();
  if (env.json) {
    nlohmann::json out = ToJson(*report);
    out["access"] = ToJson(*access);
    out["gates"] = {{"problems", *gate_problems}, {"ok", gate_problems->empty()}};
    out["ok"] = ok;
    io.out << out.dump() << "\n";
  } else {
    for (const BadRow& b : report->bad_rows) {
      io.out << "BAD row " << b.row_id << "  id " << (b.id.empty() ? "(none)" : b.id) << "  namespace "
             << (b.name_space.empty() ? "(none)" : b.name_space) << ": " << b.reason << "\n";
    }
    for (const BadEvent& b : report->bad_events) {
      io.out << "BAD history event " << b.seq << ": " << b.reason << "\n";
    }
    if (!report->integrity_problem.empty()) io.out << "BAD database: " << report->integrity_problem << "\n";
    for (const std::string& problem : access->problems) io.out << "BAD " << problem << "\n";
    for (const std::string& problem : *gate_problems) io.out << "BAD " << problem << "\n";
    io.out << report->rows_checked << " rows checked, " << report->bad_rows.size() << " bad; "
           << report->events_checked << " history events checked, " << report->bad_events.size() << " bad; "
           << access->principals << " principals and " << access->keys << " API keys checked, "
           << access->problems.size() << " bad\n";
  }
  return ok ? 0 : 1;
}

int CmdStats(const CommandEnv& env) {
  Io io{env.out, env.err};
  auto store = OpenStore(env);
  if (!store.ok()) return Fail(io, store.status());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail(io, stats.status());
  nlohmann::json namespaces = nlohmann::json::array();
  for (const NamespaceStats& ns : stats->namespaces) {
    namespaces.push_back({{"namespace", ns.name_space},
                          {"active", ns.active},
                          {"quarantined", ns.quarantined},
                          {"deleted", ns.deleted},
                          {"purged", ns.purged},
                          {"honeypots", ns.honeypots}});
  }
  if (env.json) {
    io.out << nlohmann::json{{"embedder", stats->embedder.ToString()},
                             {"newest_key_id", stats->newest_key_id},
                             {"keys", stats->key_count},
                             {"namespaces", namespaces}}
                  .dump()
           << "\n";
    return 0;
  }
  io.out << "embedder:  " << stats->embedder.ToString() << "\n"
         << "keys:      " << stats->key_count << " (newest " << stats->newest_key_id << ")\n";
  for (const auto& ns : namespaces) {
    io.out << "namespace " << ns["namespace"].get<std::string>() << ": " << ns["active"] << " active, "
           << ns["quarantined"] << " quarantined, " << ns["deleted"] << " deleted, " << ns["purged"]
           << " purged\n";
  }
  return 0;
}

// `verify` and `stats`.
class StoreCheckCommands : public CommandGroup {
 public:
  void Register(CLI::App& app) override {
    verify_ = app.add_subcommand("verify", "check every row's signature; exit 1 if any is bad");
    stats_ = app.add_subcommand("stats", "counts per namespace, embedder, keys");
  }
  std::optional<int> Run(const CommandEnv& env) override {
    if (verify_->parsed()) return CmdVerify(env);
    if (stats_->parsed()) return CmdStats(env);
    return std::nullopt;
  }

 private:
  CLI::App* verify_ = nullptr;
  CLI::App* stats_ = nullptr;
};

// The global flags, bound to `g` and (--backend) `backend`.
void AddGlobalFlags(CLI::App& app, GlobalFlags* g, std::string* backend) {
  auto* store_opt = app.add_option("--store", g->store, "store location: a directory, or a postgresql:// URL")
                        ->envname("BULWARK_STORE")
                        ->capture_default_str();
  // Issue #17's spelling for a PostgreSQL store: the same location as --store, which must then be
  // a postgresql:// (or postgres://) URL. One location string names a store of either engine, so
  // every command that opens a store takes it without a flag of its own.
  app.add_option("--backend", *backend, "PostgreSQL store: postgresql://USER@HOST:PORT/DB (needs --keyring)")
      ->envname("BULWARK_BACKEND")
      ->excludes(store_opt);
  app.add_option("-n,--namespace", g->name_space, "namespace")->capture_default_str();
  app.add_option("--principal", g->principal, "who is writing (default local:$USER)");
  app.add_option("--keyring", g->keyring,
                 "keyring file (default STORE/keyring.json; required for PostgreSQL)")
      ->envname("BULWARK_KEYRING");
  app.add_option("--max-text-bytes", g->max_text_bytes, "largest accepted text")
      ->capture_default_str()
      ->check(CLI::Range(1, 16 << 20));
  app.add_option("--index-snapshot-min-rows", g->index_snapshot_min_rows,
                 "leave an index snapshot (index.snap) at close from this many indexed entries; -1: none")
      ->envname("BULWARK_INDEX_SNAPSHOT_MIN_ROWS")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 40));
  app.add_flag("--json", g->json, "machine-readable JSON output");
}

// Logs (e.g. rejected rows) go to `err` while this object lives; the previous logger comes back.
class ScopedLogger {
 public:
  explicit ScopedLogger(std::ostream& err) : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(err);
    sink->set_pattern("%l: %v");
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("bulwark", sink));
  }
  ~ScopedLogger() { spdlog::set_default_logger(previous_); }
  ScopedLogger(const ScopedLogger&) = delete;
  ScopedLogger& operator=(const ScopedLogger&) = delete;

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace

int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return RunWithGroups(argc, argv, out, err, {});
}

int RunWithGroups(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                  std::span<CommandGroup* const> groups) {
  ScopedLogger logger(err);
  GlobalFlags g;
  std::string backend;
  CLI::App app{"Bulwark: a poisoning- and extraction-resistant memory store for LLM agents"};
  app.fallthrough();
  app.require_subcommand(1);
  AddGlobalFlags(app, &g, &backend);

  // Registration order is the order of `bulwark --help`.
  ReadDefenseCommands read_defenses;
  MemoryCommands memories(&read_defenses);
  GateCommands gate;
  StoreCheckCommands checks;
  ServeCommand serve;
  AccessCommands access;
  HoneypotCommands honeypots;
  McpCommands mcp;
  RetrievalCommands retrieval;
  MigrateCommand migrate;
  std::vector<CommandGroup*> all = {&memories,      &gate,      &checks, &serve,     &access,
                                    &read_defenses, &honeypots, &mcp,    &retrieval, &migrate};
  all.insert(all.end(), groups.begin(), groups.end());
  for (CommandGroup* group : all) group->Register(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? 0 : 2;
  }
  if (g.principal.empty()) g.principal = DefaultPrincipal();
  if (absl::Status s = ApplyBackend(backend, &g); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return 2;
  }
  const bool store_given = app.get_option("--store")->count() > 0 || !backend.empty();
  const bool err_is_terminal = (&err == &std::cerr) && isatty(STDERR_FILENO);
  CommandEnv command_env{g.store, g.name_space, g.json,      MakeOptions(g),
                         out,     err,          store_given, err_is_terminal};
  command_env.namespace_given = app.get_option("--namespace")->count() > 0;
  command_env.principal = g.principal;
  command_env.keyring = g.keyring;
  for (CommandGroup* group : all) {
    if (auto code = group->Run(command_env)) return *code;
  }
  return 2;
}

}  // namespace bulwark::cli
