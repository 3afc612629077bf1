// Subcommands of `bulwark`: init, keys, add, search, get, history, update, delete, purge, export,
// calibrate, quarantine, watermark, verify and stats are here; the others are command groups of
// their own files: serve (serve_command.h), principals and audit (access_commands.h), the read-time
// defenses (read_defense_commands.h), honeypots and sessions (honeypot_commands.h), mcp
// (mcp_commands.h), retrieval (retrieval_commands.h), migrate (migrate_command.h); `bulwark-lab`
// adds the attacks and evaluations (lab.h). Every command that prints results takes --json for
// machine-readable output.
#include "cli/cli.h"

#include <absl/strings/str_cat.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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

absl::StatusOr<std::unique_ptr<MemoryStore>> OpenStore(const GlobalFlags& g) {
  return MemoryStore::Open(g.store, MakeOptions(g));
}

std::filesystem::path KeyringPath(const GlobalFlags& g) {
  return g.keyring.empty() ? StoreLayout(g.store).keyring() : std::filesystem::path(g.keyring);
}

int CmdVerify(const GlobalFlags& g, const CommandEnv& env) {
  Io io{env.out, env.err};
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  auto report = (*store)->Verify();
  if (!report.ok()) return Fail(io, report.status());
  // The access-control rows (principals, API keys) carry tags too.
  auto registry = OpenPrincipalRegistry(env);
  if (!registry.ok()) return Fail(io, registry.status());
  auto access = (*registry)->Verify();
  if (!access.ok()) return Fail(io, access.status());
  auto gates = GateStore::Open(StoreLayout(g.store).database(), KeyringPath(g));
  if (!gates.ok()) return Fail(io, gates.status());
  auto gate_problems = (*gates)->Verify();
  if (!gate_problems.ok()) return Fail(io, gate_problems.status());
  const bool ok = report->ok() && access->ok() && gate_problems->empty();
  if (g.json) {
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

int CmdStats(const GlobalFlags& g, Io io) {
  auto store = OpenStore(g);
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
  if (g.json) {
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

}  // namespace

int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return RunWithGroups(argc, argv, out, err, {});
}

int RunWithGroups(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                  std::span<CommandGroup* const> groups) {
  // Log warnings (e.g. rejected rows) to the caller's error stream.
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(err);
  sink->set_pattern("%l: %v");
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("bulwark", sink));
  struct RestoreLogger {
    std::shared_ptr<spdlog::logger> logger;
    ~RestoreLogger() { spdlog::set_default_logger(logger); }
  } restore{previous};

  Io io{out, err};
  GlobalFlags g;
  CLI::App app{"Bulwark: a poisoning- and extraction-resistant memory store for LLM agents"};
  app.fallthrough();
  app.require_subcommand(1);
  auto* store_opt = app.add_option("--store", g.store, "store location: a directory, or a postgresql:// URL")
                        ->envname("BULWARK_STORE")
                        ->capture_default_str();
  // Issue #17's spelling for a PostgreSQL store: the same location as --store, which must then be
  // a postgresql:// (or postgres://) URL. One location string names a store of either engine, so
  // every command that opens a store takes it without a flag of its own.
  std::string backend;
  app.add_option("--backend", backend, "PostgreSQL store: postgresql://USER@HOST:PORT/DB (needs --keyring)")
      ->envname("BULWARK_BACKEND")
      ->excludes(store_opt);
  app.add_option("-n,--namespace", g.name_space, "namespace")->capture_default_str();
  app.add_option("--principal", g.principal, "who is writing (default local:$USER)");
  app.add_option("--keyring", g.keyring, "keyring file (default STORE/keyring.json; required for PostgreSQL)")
      ->envname("BULWARK_KEYRING");
  app.add_option("--max-text-bytes", g.max_text_bytes, "largest accepted text")
      ->capture_default_str()
      ->check(CLI::Range(1, 16 << 20));
  app.add_flag("--json", g.json, "machine-readable JSON output");

  ReadDefenseCommands read_defenses;
  MemoryCommands memories(&read_defenses);
  memories.Register(app);

  CalibrateFlags cf;
  auto* calibrate = app.add_subcommand("calibrate", "calibrate the write gate's detectors for a namespace");
  calibrate->add_option(
      "--queries", cf.queries_file,
      "calibration queries (lines, or JSONL with \"query\"); they become the namespace's query "
      "history (default: the history its searches built)");
  auto* ref_opt =
      calibrate->add_option("--reference", cf.reference_file, "benign reference entries (import JSONL)");
  calibrate->add_option("--from-store", cf.from_store, "use the N newest active entries as the reference")
      ->capture_default_str()
      ->excludes(ref_opt)
      ->check(CLI::Range(2, 1'000'000));
  calibrate->add_option("--trigger", cf.trigger,
                        "suspected trigger appended to every query (triggered calibration)");
  calibrate
      ->add_option("--target-fpr", cf.target_fpr,
                   "false-positive rate on the reference set for the "
                   "embedder-dependent thresholds (default from gate.json: 0.01)")
      ->check(CLI::Range(0.0, 0.999));
  calibrate->add_option("--kappa", cf.kappa, "memsad threshold mu + kappa*sigma (default 2.0)")
      ->check(CLI::PositiveNumber);

  std::string gate_action, id;
  auto* quarantine = app.add_subcommand("quarantine", "review entries the write gate quarantined");
  quarantine->require_subcommand(1);
  auto* q_list = quarantine->add_subcommand("list", "list quarantined entries with their reasons");
  auto* q_release =
      quarantine->add_subcommand("release", "make a quarantined entry retrievable (history kept)");
  q_release->add_option("id", id)->required();
  auto* q_reject = quarantine->add_subcommand("reject", "reject a quarantined entry (it becomes deleted)");
  q_reject->add_option("id", id)->required();

  double z_target = 1.5;
  std::string watermark_text;
  auto* watermark = app.add_subcommand(
      "watermark", "mark text so it passes the watermark detector (gate.json watermark.scheme), or check it");
  watermark->require_subcommand(1);
  auto* w_mark = watermark->add_subcommand(
      "mark",
      "print the marked text (stdout) and every substitution made (stderr); exit 1 if it cannot verify");
  w_mark->add_option("text", watermark_text, "the text, or - for stdin")->required();
  w_mark->add_option("--z-target", z_target, "z-score to reach (at least the detector's threshold)")
      ->capture_default_str();
  auto* w_check = watermark->add_subcommand("check", "exit 0 if the text verifies");
  w_check->add_option("text", watermark_text, "the text, or - for stdin")->required();

  auto* verify = app.add_subcommand("verify", "check every row's signature; exit 1 if any is bad");
  auto* stats = app.add_subcommand("stats", "counts per namespace, embedder, keys");

  ServeCommand serve;
  serve.Register(app);
  AccessCommands access;
  access.Register(app);
  read_defenses.Register(app);
  HoneypotCommands honeypots;
  honeypots.Register(app);
  McpCommands mcp;
  mcp.Register(app);
  RetrievalCommands retrieval;
  retrieval.Register(app);
  MigrateCommand migrate;
  migrate.Register(app);
  for (CommandGroup* group : groups) group->Register(app);

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

  if (calibrate->parsed() || quarantine->parsed() || watermark->parsed()) {
    auto store = OpenStore(g);
    if (!store.ok()) return Fail(io, store.status());
    if (calibrate->parsed()) return RunCalibrate(**store, g.name_space, cf, g.json, io.out, io.err);
    if (quarantine->parsed()) {
      gate_action = q_list->parsed() ? "list" : q_release->parsed() ? "release" : "reject";
      (void)q_reject;
      return RunQuarantine(**store, g.name_space, gate_action, id, g.principal, g.json, io.out, io.err);
    }
    return RunWatermark(**store, w_mark->parsed() ? "mark" : "check", watermark_text, z_target, g.json,
                        io.out, io.err);
  }
  const bool store_given = app.get_option("--store")->count() > 0 || !backend.empty();
  const bool err_is_terminal = (&err == &std::cerr) && isatty(STDERR_FILENO);
  CommandEnv command_env{g.store, g.name_space, g.json,      MakeOptions(g),
                         out,     err,          store_given, err_is_terminal};
  command_env.namespace_given = app.get_option("--namespace")->count() > 0;
  command_env.principal = g.principal;
  command_env.keyring = g.keyring;
  if (verify->parsed()) return CmdVerify(g, command_env);
  if (stats->parsed()) return CmdStats(g, io);
  if (auto code = serve.Run(command_env)) return *code;
  if (auto code = memories.Run(command_env)) return *code;
  if (auto code = access.Run(command_env)) return *code;
  if (auto code = read_defenses.Run(command_env)) return *code;
  if (auto code = honeypots.Run(command_env)) return *code;
  if (auto code = mcp.Run(command_env)) return *code;
  if (auto code = retrieval.Run(command_env)) return *code;
  if (auto code = migrate.Run(command_env)) return *code;
  for (CommandGroup* group : groups) {
    if (auto code = group->Run(command_env)) return *code;
  }
  return 2;
}

}  // namespace bulwark::cli
