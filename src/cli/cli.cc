// Subcommands of `bulwark`: init, keys, add, search, get, history, update, delete, purge, export,
// calibrate, quarantine, watermark, verify and stats are here; the others are command groups of
// their own files: serve (serve_command.h), principals and audit (access_commands.h), the read-time
// defenses (read_defense_commands.h), honeypots and sessions (honeypot_commands.h), mcp
// (mcp_commands.h), retrieval (retrieval_commands.h); `bulwark-lab` adds the attacks and
// evaluations (lab.h). Every command that prints results takes --json for machine-readable output.
#include "cli/cli.h"

#include <absl/strings/str_cat.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "audit/audit_chain.h"
#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "bulwark/memory_store.h"
#include "cli/access_commands.h"
#include "cli/cli_format.h"
#include "cli/gate_commands.h"
#include "cli/honeypot_commands.h"
#include "cli/jsonl_import.h"
#include "cli/mcp_commands.h"
#include "cli/read_defense_commands.h"
#include "cli/retrieval_commands.h"
#include "cli/serve_command.h"
#include "gate/gate_store.h"
#include "provenance/keyring.h"
#include "storage/store_layout.h"

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

absl::StatusOr<std::unique_ptr<MemoryStore>> OpenStore(const GlobalFlags& g) {
  return MemoryStore::Open(g.store, MakeOptions(g));
}

void PrintEntry(std::ostream& out, const Entry& e) {
  out << "id:        " << e.id << "\n"
      << "namespace: " << e.name_space << "\n"
      << "state:     " << ToString(e.state) << "\n"
      << "source:    " << ToString(e.source) << " (principal " << e.principal << ")\n"
      << "created:   " << FormatTime(e.created_at_us) << "\n"
      << "metadata:  " << e.metadata.dump() << "\n"
      << "text:      " << e.text << "\n";
}

// Shows "label: done/total" on one terminal line while work proceeds; silent when not a tty.
class Progress {
 public:
  Progress(std::ostream& err, std::string label) : err_(err), label_(std::move(label)) {
    enabled_ = (&err == &std::cerr) && isatty(STDERR_FILENO);
  }
  void Update(size_t done, size_t total) {
    if (!enabled_) return;
    err_ << "\r" << label_ << ": " << done << "/" << total << std::flush;
    shown_ = true;
  }
  ~Progress() {
    if (shown_) err_ << "\n";
  }

 private:
  std::ostream& err_;
  std::string label_;
  bool enabled_ = false;
  bool shown_ = false;
};

int CmdInit(const GlobalFlags& g, const std::string& embedder_json, bool no_synonyms, Io io) {
  StoreOptions options = MakeOptions(g);
  nlohmann::json config = {{"kind", "lexical"}};
  if (!embedder_json.empty()) {
    config = nlohmann::json::parse(embedder_json, nullptr, false);
    if (!config.is_object()) return Fail(io, absl::InvalidArgumentError("--embedder must be a JSON object"));
  }
  if (no_synonyms) config["synonyms"] = false;
  options.embedder_config = config;
  auto store = MemoryStore::Create(g.store, options);
  if (!store.ok()) return Fail(io, store.status());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return Fail(io, stats.status());
  if (g.json) {
    io.out << nlohmann::json{{"store", g.store},
                             {"embedder", stats->embedder.ToString()},
                             {"key_id", stats->newest_key_id}}
                  .dump()
           << "\n";
  } else {
    io.out << "created store " << g.store << " (embedder " << stats->embedder.ToString() << ", signing key "
           << stats->newest_key_id << ")\n";
  }
  return 0;
}

std::filesystem::path KeyringPath(const GlobalFlags& g) {
  return g.keyring.empty() ? StoreLayout(g.store).keyring() : std::filesystem::path(g.keyring);
}

int CmdKeys(const GlobalFlags& g, const std::string& action, Io io) {
  const std::filesystem::path path = KeyringPath(g);
  if (action == "create") {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    auto keyring = Keyring::Create(path, Env::Default());
    if (!keyring.ok()) return Fail(io, keyring.status());
    if (g.json) {
      io.out << nlohmann::json{{"keyring", path.string()}, {"key_id", keyring->newest_key_id()}}.dump()
             << "\n";
    } else {
      io.out << "created keyring " << path.string() << " with key " << keyring->newest_key_id() << "\n";
    }
    return 0;
  }
  auto keyring = Keyring::Load(path);
  if (!keyring.ok()) return Fail(io, keyring.status());
  if (action == "rotate") {
    auto id = keyring->Rotate(Env::Default());
    if (!id.ok()) return Fail(io, id.status());
    if (g.json) {
      io.out << nlohmann::json{{"key_id", *id}}.dump() << "\n";
    } else {
      io.out << "new signing key " << *id << "; older keys still verify\n";
    }
    return 0;
  }
  nlohmann::json keys = nlohmann::json::array();
  for (const KeyInfo& k : keyring->List()) {
    keys.push_back(
        {{"id", k.id}, {"created_at_us", k.created_at_us}, {"newest", k.id == keyring->newest_key_id()}});
  }
  if (g.json) {
    io.out << nlohmann::json{{"keys", keys}}.dump() << "\n";
  } else {
    for (const auto& k : keys) {
      io.out << "key " << k["id"] << "  created " << FormatTime(k["created_at_us"].get<int64_t>())
             << (k["newest"].get<bool>() ? "  (signs new writes)" : "") << "\n";
    }
  }
  return 0;
}

int CmdAdd(const GlobalFlags& g, const std::optional<std::string>& text, const std::string& file,
           const std::string& metadata_json, const std::string& source_name, Io io) {
  if (text.has_value() == !file.empty()) {
    return Fail(io, absl::InvalidArgumentError("give either a TEXT argument or --file FILE.jsonl"));
  }
  std::vector<NewEntry> entries;
  if (text) {
    NewEntry entry;
    entry.text = *text;
    auto source = ParseSource(source_name);
    if (!source)
      return Fail(io,
                  absl::InvalidArgumentError("--source must be one of user, agent, tool, system, import"));
    entry.source = *source;
    if (!metadata_json.empty()) {
      entry.metadata = nlohmann::json::parse(metadata_json, nullptr, false);
      if (!entry.metadata.is_object()) {
        return Fail(io, absl::InvalidArgumentError("--metadata must be a JSON object"));
      }
    }
    entries.push_back(std::move(entry));
  } else {
    std::ifstream in(file);
    if (!in) return Fail(io, absl::NotFoundError(absl::StrCat("cannot read ", file)));
    ImportLimits limits;
    limits.max_text_bytes = g.max_text_bytes;
    auto parsed = ParseImportJsonl(in, limits);
    if (!parsed.ok()) {
      return Fail(io, absl::Status(parsed.status().code(), absl::StrCat(file, ": ", parsed.status().message(),
                                                                        " (nothing was imported)")));
    }
    entries = *std::move(parsed);
  }
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  Progress progress(io.err, "embedding");
  auto added = (*store)->AddBatch(g.name_space, entries, g.principal,
                                  [&](size_t done, size_t total) { progress.Update(done, total); });
  if (!added.ok()) return Fail(io, added.status());
  if (g.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Entry& e : *added) out.push_back(ToJson(e));
    io.out << (text ? out[0] : nlohmann::json{{"added", out.size()}, {"entries", out}}).dump() << "\n";
  } else if (text) {
    io.out << "added " << added->front().id << "\n";
  } else {
    io.out << "imported " << added->size() << " entries into namespace " << g.name_space << "\n";
  }
  return 0;
}

// The defended read path (query gate, smoothing) lives in read_defense_commands.cc.
int CmdSearch(const GlobalFlags& g, const std::string& query, int k, const std::string& filter_json,
              bool include_quarantined, ReadDefenseCommands& read_defenses, Io io) {
  SearchOptions options;
  options.k = k;
  options.include_quarantined = include_quarantined;
  if (!filter_json.empty()) {
    options.metadata_filter = nlohmann::json::parse(filter_json, nullptr, false);
    if (!options.metadata_filter.is_object()) {
      return Fail(io, absl::InvalidArgumentError("--filter must be a JSON object"));
    }
  }
  return read_defenses.RunSearch({g.store, g.name_space, g.json, MakeOptions(g), io.out, io.err}, query,
                                 options);
}

int CmdGet(const GlobalFlags& g, const std::string& id, Io io) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  auto entry = (*store)->Get(g.name_space, id);
  if (!entry.ok()) return Fail(io, entry.status());
  if (g.json) {
    io.out << ToJson(*entry).dump() << "\n";
  } else {
    PrintEntry(io.out, *entry);
  }
  return 0;
}

int CmdHistory(const GlobalFlags& g, const std::string& id, Io io) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  auto events = (*store)->History(g.name_space, id);
  if (!events.ok()) return Fail(io, events.status());
  if (g.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const HistoryEvent& ev : *events) out.push_back(ToJson(ev));
    io.out << nlohmann::json{{"id", id}, {"events", out}}.dump() << "\n";
    return 0;
  }
  for (const HistoryEvent& ev : *events) {
    io.out << FormatTime(ev.at_us) << "  " << std::left << std::setw(10) << ev.event << " by " << ev.actor
           << "  " << (ev.verified ? "" : "FAILED VERIFICATION  ") << ev.detail.dump() << "\n";
  }
  return 0;
}

int CmdUpdate(const GlobalFlags& g, const std::string& id, const std::optional<std::string>& text,
              const std::string& metadata_json, Io io) {
  EntryUpdate update;
  update.text = text;
  if (!metadata_json.empty()) {
    update.metadata = nlohmann::json::parse(metadata_json, nullptr, false);
    if (!update.metadata->is_object())
      return Fail(io, absl::InvalidArgumentError("--metadata must be a JSON object"));
  }
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  auto entry = (*store)->Update(g.name_space, id, update, g.principal);
  if (!entry.ok()) return Fail(io, entry.status());
  if (g.json) {
    io.out << ToJson(*entry).dump() << "\n";
  } else {
    io.out << "updated " << entry->id << "\n";
  }
  return 0;
}

int CmdRemove(const GlobalFlags& g, const std::string& id, bool purge, Io io) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  absl::Status status = purge ? (*store)->Purge(g.name_space, id, g.principal)
                              : (*store)->Delete(g.name_space, id, g.principal);
  if (!status.ok()) return Fail(io, status);
  const char* verb = purge ? "purged" : "deleted";
  if (g.json) {
    io.out << nlohmann::json{{"id", id}, {"state", verb}}.dump() << "\n";
  } else {
    io.out << verb << " " << id << "\n";
  }
  return 0;
}

int CmdExport(const GlobalFlags& g, const std::string& output, bool all_states, Io io) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  std::ofstream file;
  if (!output.empty()) {
    file.open(output, std::ios::out | std::ios::trunc);
    if (!file) return Fail(io, absl::UnavailableError(absl::StrCat("cannot write ", output)));
  }
  std::ostream& sink = output.empty() ? io.out : file;
  uint32_t mask = 1u << static_cast<int>(State::kActive);
  if (all_states) mask = ~0u;
  int64_t exported = 0;
  auto skipped = (*store)->Export(g.name_space, mask, [&](const Entry& e) {
    sink << ToJson(e).dump() << "\n";
    ++exported;
    return sink ? absl::OkStatus() : absl::UnavailableError("write failed");
  });
  if (!skipped.ok()) return Fail(io, skipped.status());
  if (!output.empty()) io.err << "exported " << exported << " entries to " << output << "\n";
  if (*skipped > 0) {
    io.err << "warning: " << *skipped
           << " row(s) failed verification and were not exported (run `bulwark verify`)\n";
  }
  return 0;
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
  app.add_option("--store", g.store, "store directory")->envname("BULWARK_STORE")->capture_default_str();
  app.add_option("-n,--namespace", g.name_space, "namespace")->capture_default_str();
  app.add_option("--principal", g.principal, "who is writing (default local:$USER)");
  app.add_option("--keyring", g.keyring, "keyring file (default STORE/keyring.json)");
  app.add_option("--max-text-bytes", g.max_text_bytes, "largest accepted text")
      ->capture_default_str()
      ->check(CLI::Range(1, 16 << 20));
  app.add_flag("--json", g.json, "machine-readable JSON output");

  std::string embedder_json;
  bool no_synonyms = false;
  auto* init = app.add_subcommand("init", "create a new store");
  init->add_option("--embedder", embedder_json, R"(embedder configuration as JSON, e.g. {"kind":"lexical"})");
  init->add_flag("--no-synonyms", no_synonyms, "lexical embedder without WordNet synonym canonicalization");

  std::string key_action;
  auto* keys = app.add_subcommand("keys", "manage the signing keyring");
  keys->add_option("action", key_action, "create | rotate | list")
      ->required()
      ->check(CLI::IsMember({"create", "rotate", "list"}));

  std::optional<std::string> text;
  std::string file, metadata_json, source_name = "user";
  auto* add = app.add_subcommand("add", "add a memory, or import a JSONL file as one batch");
  add->add_option("text", text, "the memory text");
  add->add_option("-f,--file", file, "JSONL file: one {\"text\", \"metadata\", \"source\"} object per line");
  add->add_option("-m,--metadata", metadata_json, "metadata JSON object");
  add->add_option("-s,--source", source_name, "user | agent | tool | system | import")->capture_default_str();

  std::string query, filter_json;
  int k = 5;
  bool include_quarantined = false;
  auto* search = app.add_subcommand("search", "top-k verified memories for a query");
  search->add_option("query", query, "query text")->required();
  search->add_option("-k", k, "results")->capture_default_str();
  search->add_option("--filter", filter_json, "exact-match metadata filter (JSON object)");
  search->add_flag("--include-quarantined", include_quarantined, "also return quarantined entries");
  ReadDefenseCommands read_defenses;
  read_defenses.AddSearchFlags(search);

  std::string id;
  auto* get = app.add_subcommand("get", "show one memory");
  get->add_option("id", id)->required();
  auto* history = app.add_subcommand("history", "show the history of one memory");
  history->add_option("id", id)->required();
  auto* update = app.add_subcommand("update", "change the text or metadata of a memory");
  update->add_option("id", id)->required();
  update->add_option("--text", text, "new text");
  update->add_option("-m,--metadata", metadata_json, "new metadata JSON object");
  auto* del = app.add_subcommand("delete", "soft-delete a memory (kept in history)");
  del->add_option("id", id)->required();
  auto* purge = app.add_subcommand("purge", "erase a memory's content everywhere (GDPR)");
  purge->add_option("id", id)->required();

  std::string output;
  bool all_states = false;
  auto* exp = app.add_subcommand("export", "write verified memories as JSONL");
  exp->add_option("-o,--output", output, "file (default stdout)");
  exp->add_flag("--all-states", all_states, "include quarantined, deleted and purged entries");

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

  std::string gate_action;
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
  for (CommandGroup* group : groups) group->Register(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? 0 : 2;
  }
  if (g.principal.empty()) g.principal = DefaultPrincipal();

  if (init->parsed()) return CmdInit(g, embedder_json, no_synonyms, io);
  if (keys->parsed()) return CmdKeys(g, key_action, io);
  if (add->parsed()) return CmdAdd(g, text, file, metadata_json, source_name, io);
  if (search->parsed()) return CmdSearch(g, query, k, filter_json, include_quarantined, read_defenses, io);
  if (get->parsed()) return CmdGet(g, id, io);
  if (history->parsed()) return CmdHistory(g, id, io);
  if (update->parsed()) return CmdUpdate(g, id, text, metadata_json, io);
  if (del->parsed()) return CmdRemove(g, id, /*purge=*/false, io);
  if (purge->parsed()) return CmdRemove(g, id, /*purge=*/true, io);
  if (exp->parsed()) return CmdExport(g, output, all_states, io);
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
  const bool store_given = app.get_option("--store")->count() > 0;
  const bool err_is_terminal = (&err == &std::cerr) && isatty(STDERR_FILENO);
  CommandEnv command_env{g.store, g.name_space, g.json,      MakeOptions(g),
                         out,     err,          store_given, err_is_terminal};
  command_env.namespace_given = app.get_option("--namespace")->count() > 0;
  command_env.principal = g.principal;
  command_env.keyring = g.keyring;
  if (verify->parsed()) return CmdVerify(g, command_env);
  if (stats->parsed()) return CmdStats(g, io);
  if (auto code = serve.Run(command_env)) return *code;
  if (auto code = access.Run(command_env)) return *code;
  if (auto code = read_defenses.Run(command_env)) return *code;
  if (auto code = honeypots.Run(command_env)) return *code;
  if (auto code = mcp.Run(command_env)) return *code;
  if (auto code = retrieval.Run(command_env)) return *code;
  for (CommandGroup* group : groups) {
    if (auto code = group->Run(command_env)) return *code;
  }
  return 2;
}

}  // namespace bulwark::cli
