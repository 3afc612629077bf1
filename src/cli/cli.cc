// Subcommands of `bulwark`: init, keys, add, search, get, history, update, delete, purge, export,
// verify, stats; serve (the HTTP service), principals (API principals and keys, offline) and audit
// (which memories fed which answer); the read-time defenses (read_defense_commands.h); the
// red-team attacks `attack ...` (attack_commands.h); the evaluation experiments `eval ...`
// (eval_commands.h). Every
// command that prints results takes --json for machine-readable output.
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
#include "cli/gate_commands.h"
#include "cli/honeypot_commands.h"
#include "cli/jsonl_import.h"
#include "cli/mcp_commands.h"
#include "cli/read_defense_commands.h"
#include "cli/retrieval_commands.h"
#include "gate/gate_store.h"
#include "provenance/keyring.h"
#include "server/serve.h"
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

std::string FormatTime(int64_t micros) {
  std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  std::ostringstream s;
  s << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return s.str();
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

absl::StatusOr<std::unique_ptr<PrincipalRegistry>> OpenRegistry(const GlobalFlags& g);

int CmdVerify(const GlobalFlags& g, Io io) {
  auto store = OpenStore(g);
  if (!store.ok()) return Fail(io, store.status());
  auto report = (*store)->Verify();
  if (!report.ok()) return Fail(io, report.status());
  // The access-control rows (principals, API keys) carry tags too.
  auto registry = OpenRegistry(g);
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

// --- serve, principals, audit ---------------------------------------------------------------

int CmdServe(const GlobalFlags& g, server::ServeOptions options, const std::string& llm_json, Io io) {
  if (!llm_json.empty()) {
    options.llm = nlohmann::json::parse(llm_json, nullptr, false);
    if (!options.llm.is_object()) return Fail(io, absl::InvalidArgumentError("--llm must be a JSON object"));
  }
  options.store_dir = g.store;
  options.store = MakeOptions(g);
  options.json = g.json;
  return server::RunServe(options, io.out, io.err);
}

// The principal registry of an existing store (it lives in the store's database file).
absl::StatusOr<std::unique_ptr<PrincipalRegistry>> OpenRegistry(const GlobalFlags& g) {
  const std::filesystem::path db = StoreLayout(g.store).database();
  std::error_code ec;
  if (!std::filesystem::exists(db, ec)) {
    return absl::NotFoundError(
        absl::StrCat("no store in ", g.store, " (run `bulwark init` or `bulwark serve` first)"));
  }
  return PrincipalRegistry::Open(db, Env::Default(), KeyringPath(g));
}

nlohmann::json PrincipalToJson(const Principal& p) {
  return {{"name", p.name},
          {"role", ToString(p.role)},
          {"namespaces", p.namespaces},
          {"revoked", p.revoked},
          {"created_at_us", p.created_at_us}};
}

std::string JoinNamespaces(const std::vector<std::string>& namespaces) {
  std::string out;
  for (const std::string& ns : namespaces) out += (out.empty() ? "" : ",") + ns;
  return out;
}

void PrintNewKey(const GlobalFlags& g, const std::string& principal, const std::string& key, Io io) {
  if (g.json) {
    io.out << nlohmann::json{{"principal", principal}, {"api_key", key}}.dump() << "\n";
  } else {
    io.out << "API key for " << principal << " (shown once; store it now):\n    " << key << "\n";
  }
}

struct PrincipalFlags {
  std::string name;
  std::string role = "reader";
  std::vector<std::string> namespaces;
  bool no_key = false;
  std::string key_id;
};

int CmdPrincipals(const GlobalFlags& g, const std::string& action, const PrincipalFlags& f, Io io) {
  auto registry = OpenRegistry(g);
  if (!registry.ok()) return Fail(io, registry.status());
  PrincipalRegistry& r = **registry;
  if (action == "add") {
    Principal p;
    p.name = f.name;
    auto role = ParseRole(f.role);
    if (!role) return Fail(io, absl::InvalidArgumentError("--role must be reader, writer or admin"));
    p.role = *role;
    p.namespaces = f.namespaces;
    if (p.namespaces.empty()) {
      return Fail(io,
                  absl::InvalidArgumentError("--namespaces is required (comma-separated, or '*' for all)"));
    }
    if (auto s = r.AddPrincipal(p); !s.ok()) return Fail(io, s);
    if (!g.json) {
      io.out << "created principal " << p.name << " (" << ToString(p.role) << "; namespaces "
             << JoinNamespaces(p.namespaces) << ")\n";
    }
    if (f.no_key) {
      if (g.json) io.out << nlohmann::json{{"principal", p.name}}.dump() << "\n";
      return 0;
    }
    auto key = r.CreateKey(p.name);
    if (!key.ok()) return Fail(io, key.status());
    PrintNewKey(g, p.name, *key, io);
    return 0;
  }
  if (action == "key") {
    auto key = r.CreateKey(f.name);
    if (!key.ok()) return Fail(io, key.status());
    PrintNewKey(g, f.name, *key, io);
    return 0;
  }
  if (action == "revoke") {
    if (auto s = r.RevokePrincipal(f.name); !s.ok()) return Fail(io, s);
    if (g.json) {
      io.out << nlohmann::json{{"name", f.name}, {"revoked", true}}.dump() << "\n";
    } else {
      io.out << "revoked principal " << f.name << " and all its keys\n";
    }
    return 0;
  }
  if (action == "revoke-key") {
    if (auto s = r.RevokeKey(f.key_id); !s.ok()) return Fail(io, s);
    if (g.json) {
      io.out << nlohmann::json{{"key_id", f.key_id}, {"revoked", true}}.dump() << "\n";
    } else {
      io.out << "revoked key " << f.key_id << "\n";
    }
    return 0;
  }
  // list / keys
  auto principals = r.ListPrincipals();
  if (!principals.ok()) return Fail(io, principals.status());
  nlohmann::json out = nlohmann::json::array();
  for (const Principal& p : *principals) {
    if (action == "keys" && p.name != f.name) continue;
    auto keys = r.ListKeys(p.name);
    if (!keys.ok()) return Fail(io, keys.status());
    nlohmann::json j = PrincipalToJson(p);
    j["keys"] = nlohmann::json::array();
    for (const ApiKeyInfo& k : *keys) {
      j["keys"].push_back({{"key_id", k.key_id}, {"created_at_us", k.created_at_us}, {"revoked", k.revoked}});
    }
    out.push_back(std::move(j));
  }
  if (action == "keys" && out.empty())
    return Fail(io, absl::NotFoundError(absl::StrCat("no principal ", f.name)));
  if (g.json) {
    io.out << (action == "keys" ? nlohmann::json{{"keys", out[0]["keys"]}}
                                : nlohmann::json{{"principals", out}})
                  .dump()
           << "\n";
    return 0;
  }
  for (const auto& p : out) {
    if (action == "keys") {
      for (const auto& k : p["keys"]) {
        io.out << k["key_id"].get<std::string>() << "  created "
               << FormatTime(k["created_at_us"].get<int64_t>())
               << (k["revoked"].get<bool>() ? "  REVOKED" : "") << "\n";
      }
      continue;
    }
    int active_keys = 0;
    for (const auto& k : p["keys"]) active_keys += k["revoked"].get<bool>() ? 0 : 1;
    io.out << std::left << std::setw(20) << p["name"].get<std::string>() << " " << std::setw(7)
           << p["role"].get<std::string>() << " namespaces "
           << JoinNamespaces(p["namespaces"].get<std::vector<std::string>>()) << "  keys " << active_keys
           << (p["revoked"].get<bool>() ? "  REVOKED" : "") << "\n";
  }
  if (out.empty()) io.out << "no principals\n";
  return 0;
}

// "--since": microseconds since the epoch, or an age such as 90s, 30m, 2h, 7d.
absl::StatusOr<int64_t> ParseSince(const std::string& text, int64_t now_us) {
  if (text.empty()) return 0;
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1'000'000;
      break;
    case 'm':
      unit = 60'000'000;
      break;
    case 'h':
      unit = 3'600'000'000;
      break;
    case 'd':
      unit = 86'400'000'000;
      break;
    default:
      break;
  }
  const std::string digits = unit ? text.substr(0, text.size() - 1) : text;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || value < 0 ||
      (unit && value > INT64_MAX / unit)) {
    return absl::InvalidArgumentError(
        "--since must be microseconds since the epoch or an age like 30m, 2h, 7d");
  }
  return unit ? std::max<int64_t>(0, now_us - value * unit) : value;
}

struct AuditFlags {
  std::string principal, session, entry_id, since;
  int limit = 100;
  bool verify = false;
};

// `audit --verify`: the signed chain of the whole log (audit/audit_chain.h); exit 1 if any record
// fails.
int CmdAuditVerify(const GlobalFlags& g, AuditLog& log, Io io) {
  auto v = log.Verify();
  if (!v.ok()) return Fail(io, v.status());
  if (g.json) {
    io.out << ToJson(*v).dump() << "\n";
    return v->ok() ? 0 : 1;
  }
  io.out << "audit log: " << v->records << " records";
  if (v->unsigned_records > 0)
    io.out << " (" << v->unsigned_records << " written before records were signed)";
  io.out << (v->ok() ? "; every signed record verifies\n" : "\n");
  for (const AuditVerification::Bad& b : v->bad) io.out << "BAD seq " << b.seq << ": " << b.reason << "\n";
  if (!v->ok()) {
    io.err << "error: " << v->bad.size() << " audit record(s) fail verification\n";
    return 1;
  }
  return 0;
}

int CmdAudit(const GlobalFlags& g, bool namespace_given, const AuditFlags& f, Io io) {
  const std::filesystem::path db = StoreLayout(g.store).database();
  std::error_code ec;
  if (!std::filesystem::exists(db, ec)) {
    return Fail(io, absl::NotFoundError(absl::StrCat("no store in ", g.store)));
  }
  AuditQuery query;
  if (!f.principal.empty()) query.principal = f.principal;
  if (!f.session.empty()) query.session = f.session;
  if (!f.entry_id.empty()) query.entry_id = f.entry_id;
  if (namespace_given) query.name_space = g.name_space;
  auto since = ParseSince(f.since, Env::Default()->NowMicros());
  if (!since.ok()) return Fail(io, since.status());
  query.since_us = *since;
  query.limit = f.limit;
  auto log = AuditLog::OpenForStore(db, 50, AuditLog::kDefaultQueueCapacity, g.keyring);
  if (!log.ok()) return Fail(io, log.status());
  if (f.verify) return CmdAuditVerify(g, **log, io);
  auto records = (*log)->Query(query);
  if (!records.ok()) return Fail(io, records.status());
  if (g.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const AuditRecord& r : *records) out.push_back(ToJson(r));
    io.out << nlohmann::json{{"records", out}}.dump() << "\n";
    return 0;
  }
  if (records->empty()) io.out << "no audit records\n";
  for (const AuditRecord& r : *records) {
    std::string ids;
    for (const std::string& id : r.returned_ids) ids += (ids.empty() ? "" : ",") + id;
    io.out << FormatTime(r.at_us) << "  " << r.principal << "  session "
           << (r.session.empty() ? "-" : r.session) << "  " << r.name_space << "  " << r.operation;
    if (!r.query_hash.empty()) io.out << "  query " << r.query_hash.substr(0, 16);
    io.out << "  ids [" << ids << "]\n";
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

  server::ServeOptions serve_options;
  server::ServerOptions& so = serve_options.server;
  auto* serve = app.add_subcommand(
      "serve", "run the HTTP JSON service (creates the store and an admin key on first start)");
  serve->add_option("--host", so.host, "listen address")->capture_default_str();
  serve->add_option("--port", so.port, "listen port; 0 picks a free one")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  serve->add_option("--threads", so.threads, "worker threads (each runs one complete request at a time)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  serve
      ->add_option("--max-queue", so.max_queued_connections,
                   "complete requests waiting for a worker before new ones get 503")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  serve->add_option("--max-body-bytes", so.max_body_bytes, "largest request body; larger ones get 413")
      ->capture_default_str()
      ->check(CLI::Range(1024, 64 << 20));
  serve->add_option("--max-k", so.limits.max_k, "largest search k")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  serve->add_option("--max-batch", so.limits.max_batch_entries, "most entries in one batch add")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  serve
      ->add_option("--rate", so.rate_per_second,
                   "requests per second per API key (token bucket refill); 0 disables")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e9));
  serve->add_option("--burst", so.burst, "token bucket size per API key")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e9));
  serve
      ->add_option("--admin-name", serve_options.admin_name,
                   "name of the admin principal created on first start")
      ->capture_default_str();
  serve->add_flag("--insecure-dev", so.insecure_dev,
                  "DEVELOPMENT ONLY: requests without a key act as admin (loopback only)");
  serve
      ->add_option("--log-format", serve_options.log_format,
                   "log lines: text, or json (one object per line, OpenTelemetry field names)")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  std::string serve_llm;
  serve->add_option("--llm", serve_llm,
                    R"(LLM of the llm responder and judge as JSON {"url", "model", "api_key_env", ...}; )"
                    "default from $BULWARK_LLM_URL, $BULWARK_LLM_MODEL, $BULWARK_LLM_API_KEY");
  serve
      ->add_option("--honeypot-mode", serve_options.honeypot_mode,
                   "honeypot monitor: off | monitor (record blocks) | block (refuse blocked sessions)")
      ->capture_default_str()
      ->check(CLI::IsMember({"off", "monitor", "block"}));
  serve->add_option("--expiry-sweep-ms", serve_options.expiry_sweep_ms, "purge expired entries every N ms")
      ->capture_default_str()
      ->check(CLI::Range(10, 86'400'000));
  serve->add_option("--max-nruns", so.limits.max_smoothing_runs, "largest smoothing nruns")
      ->capture_default_str()
      ->check(CLI::Range(1, 101));

  std::string principal_action;
  PrincipalFlags pf;
  auto* principals = app.add_subcommand("principals", "manage API principals and their keys (offline)");
  principals->require_subcommand(1);
  auto* p_add = principals->add_subcommand("add", "create a principal and print its first API key once");
  p_add->add_option("name", pf.name, "1-64 characters of [A-Za-z0-9_.@:-]")->required();
  p_add->add_option("--role", pf.role, "reader | writer | admin")
      ->capture_default_str()
      ->check(CLI::IsMember({"reader", "writer", "admin"}));
  p_add->add_option("--namespaces", pf.namespaces, "granted namespaces, comma-separated; '*' grants all")
      ->delimiter(',')
      ->required();
  p_add->add_flag("--no-key", pf.no_key, "do not create a key now");
  auto* p_list =
      principals->add_subcommand("list", "list principals with their roles, grants and key counts");
  auto* p_revoke = principals->add_subcommand("revoke", "revoke a principal and all its keys");
  p_revoke->add_option("name", pf.name)->required();
  auto* p_key = principals->add_subcommand("key", "create another API key for a principal (printed once)");
  p_key->add_option("name", pf.name)->required();
  auto* p_keys = principals->add_subcommand("keys", "list a principal's key ids");
  p_keys->add_option("name", pf.name)->required();
  auto* p_revoke_key = principals->add_subcommand("revoke-key", "revoke one API key by its key id");
  p_revoke_key->add_option("key_id", pf.key_id)->required();

  AuditFlags af;
  auto* audit =
      app.add_subcommand("audit", "read the audit log: which memories fed which answer (newest first)");
  audit->add_option("--principal", af.principal, "only this principal");
  audit->add_option("--session", af.session, "only this X-Bulwark-Session");
  audit->add_option("--entry", af.entry_id, "only records that returned this entry id");
  audit->add_option("--since", af.since, "microseconds since the epoch, or an age: 30m, 2h, 7d");
  audit->add_option("--limit", af.limit, "most records")->capture_default_str()->check(CLI::Range(1, 10000));
  audit->add_flag(
      "--verify", af.verify,
      "check the signed chain of every record (edited, forged or removed records); exit 1 if any fails");
  audit->footer("Filter by namespace with the global -n/--namespace (all namespaces when not given).");

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
  if (verify->parsed()) return CmdVerify(g, io);
  if (stats->parsed()) return CmdStats(g, io);
  if (serve->parsed()) return CmdServe(g, serve_options, serve_llm, io);
  if (principals->parsed()) {
    for (auto* sub : {p_add, p_list, p_revoke, p_key, p_keys, p_revoke_key}) {
      if (sub->parsed()) principal_action = sub->get_name();
    }
    return CmdPrincipals(g, principal_action, pf, io);
  }
  if (audit->parsed()) return CmdAudit(g, app.get_option("--namespace")->count() > 0, af, io);
  const bool store_given = app.get_option("--store")->count() > 0;
  const bool err_is_terminal = (&err == &std::cerr) && isatty(STDERR_FILENO);
  const CommandEnv command_env{g.store, g.name_space, g.json,      MakeOptions(g),
                               out,     err,          store_given, err_is_terminal};
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
