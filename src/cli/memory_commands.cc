// The everyday commands on a store's memories (memory_commands.h).
#include "cli/memory_commands.h"

#include <absl/strings/str_cat.h>
#include <unistd.h>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bulwark/env.h"
#include "cli/cli_format.h"
#include "cli/jsonl_import.h"
#include "provenance/keyring.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"

namespace bulwark::cli {
namespace {

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

int CmdInit(const std::string& embedder_json, bool no_synonyms, const CommandEnv& env) {
  StoreOptions options = env.store_options;
  nlohmann::json config = {{"kind", "lexical"}};
  if (!embedder_json.empty()) {
    config = nlohmann::json::parse(embedder_json, nullptr, false);
    if (!config.is_object())
      return FailCommand(env, absl::InvalidArgumentError("--embedder must be a JSON object"));
  }
  if (no_synonyms) config["synonyms"] = false;
  options.embedder_config = config;
  auto store = MemoryStore::Create(env.store, options);
  if (!store.ok()) return FailCommand(env, store.status());
  auto stats = (*store)->Stats();
  if (!stats.ok()) return FailCommand(env, stats.status());
  if (env.json) {
    env.out << nlohmann::json{{"store", env.store},
                              {"embedder", stats->embedder.ToString()},
                              {"key_id", stats->newest_key_id}}
                   .dump()
            << "\n";
  } else {
    env.out << "created store " << env.store << " (embedder " << stats->embedder.ToString()
            << ", signing key " << stats->newest_key_id << ")\n";
  }
  return 0;
}

int CmdKeys(const std::string& action, const CommandEnv& env) {
  const std::filesystem::path path = StoreLayout(env.store, env.keyring).keyring();
  if (action == "create") {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    auto keyring = Keyring::Create(path, Env::Default());
    if (!keyring.ok()) return FailCommand(env, keyring.status());
    if (env.json) {
      env.out << nlohmann::json{{"keyring", path.string()}, {"key_id", keyring->newest_key_id()}}.dump()
              << "\n";
    } else {
      env.out << "created keyring " << path.string() << " with key " << keyring->newest_key_id() << "\n";
    }
    return 0;
  }
  auto keyring = Keyring::Load(path);
  if (!keyring.ok()) return FailCommand(env, keyring.status());
  if (action == "rotate") {
    auto id = keyring->Rotate(Env::Default());
    if (!id.ok()) return FailCommand(env, id.status());
    if (env.json) {
      env.out << nlohmann::json{{"key_id", *id}}.dump() << "\n";
    } else {
      env.out << "new signing key " << *id << "; older keys still verify\n";
    }
    return 0;
  }
  nlohmann::json keys = nlohmann::json::array();
  for (const KeyInfo& k : keyring->List()) {
    keys.push_back(
        {{"id", k.id}, {"created_at_us", k.created_at_us}, {"newest", k.id == keyring->newest_key_id()}});
  }
  if (env.json) {
    env.out << nlohmann::json{{"keys", keys}}.dump() << "\n";
  } else {
    for (const auto& k : keys) {
      env.out << "key " << k["id"] << "  created " << FormatTime(k["created_at_us"].get<int64_t>())
              << (k["newest"].get<bool>() ? "  (signs new writes)" : "") << "\n";
    }
  }
  return 0;
}

int CmdAdd(const std::optional<std::string>& text, const std::string& file, const std::string& metadata_json,
           const std::string& source_name, const CommandEnv& env) {
  if (text.has_value() == !file.empty()) {
    return FailCommand(env, absl::InvalidArgumentError("give either a TEXT argument or --file FILE.jsonl"));
  }
  std::vector<NewEntry> entries;
  if (text) {
    NewEntry entry;
    entry.text = *text;
    auto source = ParseSource(source_name);
    if (!source)
      return FailCommand(
          env, absl::InvalidArgumentError("--source must be one of user, agent, tool, system, import"));
    entry.source = *source;
    if (!metadata_json.empty()) {
      entry.metadata = nlohmann::json::parse(metadata_json, nullptr, false);
      if (!entry.metadata.is_object()) {
        return FailCommand(env, absl::InvalidArgumentError("--metadata must be a JSON object"));
      }
    }
    entries.push_back(std::move(entry));
  } else {
    std::ifstream in(file);
    if (!in) return FailCommand(env, absl::NotFoundError(absl::StrCat("cannot read ", file)));
    ImportLimits limits;
    limits.max_text_bytes = env.store_options.max_text_bytes;
    auto parsed = ParseImportJsonl(in, limits);
    if (!parsed.ok()) {
      return FailCommand(
          env, absl::Status(parsed.status().code(),
                            absl::StrCat(file, ": ", parsed.status().message(), " (nothing was imported)")));
    }
    entries = *std::move(parsed);
  }
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  Progress progress(env.err, "embedding");
  auto added = (*store)->AddBatch(env.name_space, entries, env.principal,
                                  [&](size_t done, size_t total) { progress.Update(done, total); });
  if (!added.ok()) return FailCommand(env, added.status());
  if (env.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Entry& e : *added) out.push_back(ToJson(e));
    env.out << (text ? out[0] : nlohmann::json{{"added", out.size()}, {"entries", out}}).dump() << "\n";
  } else if (text) {
    env.out << "added " << added->front().id << "\n";
  } else {
    env.out << "imported " << added->size() << " entries into namespace " << env.name_space << "\n";
  }
  return 0;
}

// The defended read path (query gate, smoothing) lives in read_defense_commands.cc.
int CmdSearch(const std::string& query, int k, const std::string& filter_json, bool include_quarantined,
              ReadDefenseCommands& read_defenses, const CommandEnv& env) {
  SearchOptions options;
  options.k = k;
  options.include_quarantined = include_quarantined;
  if (!filter_json.empty()) {
    options.metadata_filter = nlohmann::json::parse(filter_json, nullptr, false);
    if (!options.metadata_filter.is_object()) {
      return FailCommand(env, absl::InvalidArgumentError("--filter must be a JSON object"));
    }
  }
  return read_defenses.RunSearch(env, query, options);
}

int CmdGet(const std::string& id, const CommandEnv& env) {
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  auto entry = (*store)->Get(env.name_space, id);
  if (!entry.ok()) return FailCommand(env, entry.status());
  if (env.json) {
    env.out << ToJson(*entry).dump() << "\n";
  } else {
    PrintEntry(env.out, *entry);
  }
  return 0;
}

int CmdHistory(const std::string& id, const CommandEnv& env) {
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  auto events = (*store)->History(env.name_space, id);
  if (!events.ok()) return FailCommand(env, events.status());
  if (env.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const HistoryEvent& ev : *events) out.push_back(ToJson(ev));
    env.out << nlohmann::json{{"id", id}, {"events", out}}.dump() << "\n";
    return 0;
  }
  for (const HistoryEvent& ev : *events) {
    env.out << FormatTime(ev.at_us) << "  " << std::left << std::setw(10) << ev.event << " by " << ev.actor
            << "  " << (ev.verified ? "" : "FAILED VERIFICATION  ") << ev.detail.dump() << "\n";
  }
  return 0;
}

int CmdUpdate(const std::string& id, const std::optional<std::string>& text, const std::string& metadata_json,
              const CommandEnv& env) {
  EntryUpdate update;
  update.text = text;
  if (!metadata_json.empty()) {
    update.metadata = nlohmann::json::parse(metadata_json, nullptr, false);
    if (!update.metadata->is_object())
      return FailCommand(env, absl::InvalidArgumentError("--metadata must be a JSON object"));
  }
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  auto entry = (*store)->Update(env.name_space, id, update, env.principal);
  if (!entry.ok()) return FailCommand(env, entry.status());
  if (env.json) {
    env.out << ToJson(*entry).dump() << "\n";
  } else {
    env.out << "updated " << entry->id << "\n";
  }
  return 0;
}

int CmdRemove(const std::string& id, bool purge, const CommandEnv& env) {
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  absl::Status status = purge ? (*store)->Purge(env.name_space, id, env.principal)
                              : (*store)->Delete(env.name_space, id, env.principal);
  if (!status.ok()) return FailCommand(env, status);
  const char* verb = purge ? "purged" : "deleted";
  if (env.json) {
    env.out << nlohmann::json{{"id", id}, {"state", verb}}.dump() << "\n";
  } else {
    env.out << verb << " " << id << "\n";
  }
  return 0;
}

int CmdExport(const std::string& output, bool all_states, const CommandEnv& env) {
  auto store = MemoryStore::Open(env.store, env.store_options);
  if (!store.ok()) return FailCommand(env, store.status());
  std::ofstream file;
  if (!output.empty()) {
    file.open(output, std::ios::out | std::ios::trunc);
    if (!file) return FailCommand(env, absl::UnavailableError(absl::StrCat("cannot write ", output)));
  }
  std::ostream& sink = output.empty() ? env.out : file;
  uint32_t mask = 1u << static_cast<int>(State::kActive);
  if (all_states) mask = ~0u;
  int64_t exported = 0;
  auto skipped = (*store)->Export(env.name_space, mask, [&](const Entry& e) {
    sink << ToJson(e).dump() << "\n";
    ++exported;
    return sink ? absl::OkStatus() : absl::UnavailableError("write failed");
  });
  if (!skipped.ok()) return FailCommand(env, skipped.status());
  if (!output.empty()) env.err << "exported " << exported << " entries to " << output << "\n";
  if (*skipped > 0) {
    env.err << "warning: " << *skipped
            << " row(s) failed verification and were not exported (run `bulwark verify`)\n";
  }
  return 0;
}

}  // namespace

void MemoryCommands::Register(CLI::App& app) {
  init_ = app.add_subcommand("init", "create a new store");
  init_->add_option("--embedder", f_.embedder_json,
                    R"(embedder configuration as JSON, e.g. {"kind":"lexical"})");
  init_->add_flag("--no-synonyms", f_.no_synonyms,
                  "lexical embedder without WordNet synonym canonicalization");

  keys_ = app.add_subcommand("keys", "manage the signing keyring");
  keys_->add_option("action", f_.key_action, "create | rotate | list")
      ->required()
      ->check(CLI::IsMember({"create", "rotate", "list"}));

  add_ = app.add_subcommand("add", "add a memory, or import a JSONL file as one batch");
  add_->add_option("text", f_.text, "the memory text");
  add_->add_option("-f,--file", f_.file,
                   "JSONL file: one {\"text\", \"metadata\", \"source\"} object per line");
  add_->add_option("-m,--metadata", f_.metadata_json, "metadata JSON object");
  add_->add_option("-s,--source", f_.source_name, "user | agent | tool | system | import")
      ->capture_default_str();

  search_ = app.add_subcommand("search", "top-k verified memories for a query");
  search_->add_option("query", f_.query, "query text")->required();
  search_->add_option("-k", f_.k, "results")->capture_default_str();
  search_->add_option("--filter", f_.filter_json, "exact-match metadata filter (JSON object)");
  search_->add_flag("--include-quarantined", f_.include_quarantined, "also return quarantined entries");
  read_defenses_->AddSearchFlags(search_);

  get_ = app.add_subcommand("get", "show one memory");
  get_->add_option("id", f_.id)->required();
  history_ = app.add_subcommand("history", "show the history of one memory");
  history_->add_option("id", f_.id)->required();
  update_ = app.add_subcommand("update", "change the text or metadata of a memory");
  update_->add_option("id", f_.id)->required();
  update_->add_option("--text", f_.text, "new text");
  update_->add_option("-m,--metadata", f_.metadata_json, "new metadata JSON object");
  delete_ = app.add_subcommand("delete", "soft-delete a memory (kept in history)");
  delete_->add_option("id", f_.id)->required();
  purge_ = app.add_subcommand("purge", "erase a memory's content everywhere (GDPR)");
  purge_->add_option("id", f_.id)->required();

  export_ = app.add_subcommand("export", "write verified memories as JSONL");
  export_->add_option("-o,--output", f_.output, "file (default stdout)");
  export_->add_flag("--all-states", f_.all_states, "include quarantined, deleted and purged entries");
}

std::optional<int> MemoryCommands::Run(const CommandEnv& env) {
  if (init_->parsed()) return CmdInit(f_.embedder_json, f_.no_synonyms, env);
  if (keys_->parsed()) return CmdKeys(f_.key_action, env);
  if (add_->parsed()) return CmdAdd(f_.text, f_.file, f_.metadata_json, f_.source_name, env);
  if (search_->parsed()) {
    return CmdSearch(f_.query, f_.k, f_.filter_json, f_.include_quarantined, *read_defenses_, env);
  }
  if (get_->parsed()) return CmdGet(f_.id, env);
  if (history_->parsed()) return CmdHistory(f_.id, env);
  if (update_->parsed()) return CmdUpdate(f_.id, f_.text, f_.metadata_json, env);
  if (delete_->parsed()) return CmdRemove(f_.id, /*purge=*/false, env);
  if (purge_->parsed()) return CmdRemove(f_.id, /*purge=*/true, env);
  if (export_->parsed()) return CmdExport(f_.output, f_.all_states, env);
  return std::nullopt;
}

}  // namespace bulwark::cli
