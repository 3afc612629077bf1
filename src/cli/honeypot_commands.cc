// The `bulwark honeypots` subcommands (see honeypot_commands.h).
#include "cli/honeypot_commands.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "bulwark/memory_store.h"
#include "cli/query_file.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "embed/wordnet_canonicalizer.h"
#include "honeypot/bigram_lm.h"
#include "honeypot/honeypot_fit.h"
#include "honeypot/lexical_realizer.h"
#include "retrieval/honeypot_guard.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "storage/store_layout.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {
// The flags of `honeypots fit` (named, not anonymous: HoneypotCommands::Flags holds one).
struct HoneypotFitFlags {
  std::vector<std::string> attack_logs;
  std::string benign_queries;
  double ratio = 0.03;
  uint64_t seed = 0;
  bool stack = false;
};

namespace {

constexpr char kHoneypotPrincipal[] = "bulwark:honeypots";

// The store and its honeypot repository, opened together.
struct Opened {
  std::unique_ptr<MemoryStore> store;
  std::unique_ptr<SqliteHoneypotRepository> repo;
};

absl::StatusOr<Opened> OpenAll(const CommandEnv& env) {
  Opened o;
  BULWARK_ASSIGN_OR_RETURN(o.store, MemoryStore::Open(env.store, env.store_options));
  BULWARK_ASSIGN_OR_RETURN(o.repo, SqliteHoneypotRepository::Open(o.store->impl().layout.database()));
  return o;
}

// The namespace's current (not removed) runs, oldest first.
absl::StatusOr<std::vector<HoneypotRun>> CurrentRuns(HoneypotRepository& repo, std::string_view ns) {
  std::vector<HoneypotRun> runs;
  BULWARK_RETURN_IF_ERROR(repo.ScanRuns(ns, [&](const HoneypotRun& r) {
    if (r.removed_at_us == 0) runs.push_back(r);
    return absl::OkStatus();
  }));
  return runs;
}

absl::StatusOr<std::vector<Entry>> Pots(MemoryStore& store, std::string_view ns) {
  std::vector<Entry> pots;
  BULWARK_RETURN_IF_ERROR(store.impl()
                              .entries
                              ->ExportHoneypots(ns,
                                                [&](const Entry& e) {
                                                  pots.push_back(e);
                                                  return absl::OkStatus();
                                                })
                              .status());
  return pots;
}

// What earlier runs left, for stack mode; FailedPrecondition when pots exist and !stack.
absl::StatusOr<honeypot::PreviousFit> Previous(MemoryStore& store, HoneypotRepository& repo,
                                               std::string_view ns, bool stack) {
  honeypot::PreviousFit previous;
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> pots, Pots(store, ns));
  BULWARK_ASSIGN_OR_RETURN(std::vector<HoneypotRun> runs, CurrentRuns(repo, ns));
  if (!stack) {
    if (!pots.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("namespace ", ToAbsl(ns), " already has ", pots.size(),
                       " honeypots: fit with --stack, or `honeypots remove` first"));
    }
    return previous;
  }
  for (const HoneypotRun& r : runs) {
    const nlohmann::json covered = nlohmann::json::parse(r.covered_ids, nullptr, false);
    if (!covered.is_array())
      return absl::DataLossError(absl::StrCat("honeypot run ", r.run_id, " is malformed"));
    for (const nlohmann::json& id : covered) {
      if (!id.is_string())
        return absl::DataLossError(absl::StrCat("honeypot run ", r.run_id, " is malformed"));
      previous.covered_memory_ids.push_back(id.get<std::string>());
    }
    previous.last_batch = std::max(previous.last_batch, r.batch);
  }
  for (Entry& p : pots) previous.pot_vectors.push_back(std::move(p.embedding));
  return previous;
}

absl::StatusOr<std::vector<honeypot::FitMemory>> Memories(MemoryStore& store, std::string_view ns) {
  std::vector<honeypot::FitMemory> memories;
  BULWARK_RETURN_IF_ERROR(store
                              .Export(ns, StateBit(State::kActive),
                                      [&](const Entry& e) {
                                        memories.push_back({e.id, e.text, e.embedding});
                                        return absl::OkStatus();
                                      })
                              .status());
  return memories;
}

absl::StatusOr<std::vector<std::string>> AttackQueries(const std::vector<std::string>& paths) {
  std::vector<std::string> queries;
  for (const std::string& path : paths) {
    BULWARK_ASSIGN_OR_RETURN(std::vector<std::string> q, ReadQueryFile(path));
    queries.insert(queries.end(), q.begin(), q.end());
  }
  return queries;
}

// The lexical realiser over the store's embedder and the WordNet glosses.
absl::StatusOr<std::unique_ptr<honeypot::LexicalRealizer>> MakeRealizer(const Embedder& embedder) {
  const std::string dir(WordNetCanonicalizer::kDefaultDir);
  BULWARK_RETURN_IF_ERROR(WordNetCanonicalizer::CheckDataPresent(dir));
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const honeypot::BigramLm> lm,
                           honeypot::BigramLm::TrainOnWordNet(dir));
  BULWARK_ASSIGN_OR_RETURN(auto wordnet, WordNetCanonicalizer::Shared(dir));
  return honeypot::LexicalRealizer::Create(embedder, lm,
                                           honeypot::LexicalRealizer::DefaultVocabulary(*lm, wordnet.get()));
}

// Writes the pots through the privileged system path and records the run. Returns the run.
absl::StatusOr<HoneypotRun> StoreFit(MemoryStore& store, HoneypotRepository& repo, std::string_view ns,
                                     const honeypot::FitResult& fit, int batch) {
  std::vector<WritePipeline::SystemEntry> pots;
  for (const honeypot::FittedPot& p : fit.pots) pots.push_back({p.text, nlohmann::json::object(), p.vector});
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> written, store.impl().pipeline->AddSystemEntries(
                                                           ns, pots, Kind::kHoneypot, kHoneypotPrincipal));
  nlohmann::json ids = nlohmann::json::array();
  for (const Entry& e : written) ids.push_back(e.id);
  HoneypotRun run;
  run.name_space = std::string(ns);
  run.at_us = written.empty() ? 0 : written.front().created_at_us;
  run.batch = batch;
  nlohmann::json metrics = fit.metrics;
  metrics["timings"] = fit.timings;
  run.metrics = metrics.dump();
  run.covered_ids = nlohmann::json(fit.covered_memory_ids).dump();
  run.pot_ids = ids.dump();
  auto id = repo.AddRun(run);
  if (!id.ok()) {
    return absl::Status(id.status().code(),
                        absl::StrCat("the pots were written but their run was not recorded (remove them with "
                                     "`honeypots remove`): ",
                                     id.status().message()));
  }
  run.run_id = *id;
  return run;
}

double Num(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return 0;
    at = &(*at)[key];
  }
  return at->is_number() ? at->get<double>() : 0;
}

nlohmann::json RunJson(const HoneypotRun& run) {
  return {{"run", run.run_id},
          {"namespace", run.name_space},
          {"at_us", run.at_us},
          {"batch", run.batch},
          {"pots", nlohmann::json::parse(run.pot_ids, nullptr, false).size()},
          {"metrics", nlohmann::json::parse(run.metrics, nullptr, false)}};
}

void PrintRun(std::ostream& out, const HoneypotRun& run) {
  const nlohmann::json m = nlohmann::json::parse(run.metrics, nullptr, false);
  out << "run " << run.run_id << " (batch " << run.batch
      << "): " << nlohmann::json::parse(run.pot_ids, nullptr, false).size() << " pots for "
      << Num(m, {"covered_memories"}) << " of " << Num(m, {"memories"}) << " memories, ratio "
      << Num(m, {"ratio"}) << ", seed " << Num(m, {"seed"}) << "\n"
      << "  loss " << Num(m, {"training", "initial_loss"}) << " -> " << Num(m, {"training", "final_loss"})
      << ", training AUROC " << Num(m, {"training", "auroc"}) << ", indexed AUROC "
      << Num(m, {"indexed", "auroc"}) << "\n"
      << "  inversion gap p50 " << Num(m, {"indexed", "inversion_gap", "p50"}) << ", privacy max "
      << Num(m, {"indexed", "privacy_max"}) << " < bound " << Num(m, {"privacy_bound"}) << ", rejected "
      << (m.contains("rejected") ? m["rejected"].size() : 0) << "\n"
      << "  (training-set numbers: held-out detection needs `bulwark-lab eval extraction`)\n";
}

int RunFit(const CommandEnv& env, const HoneypotFitFlags& f) {
  auto opened = OpenAll(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  MemoryStore& store = *opened->store;
  auto attack = AttackQueries(f.attack_logs);
  if (!attack.ok()) return FailCommand(env, attack.status());
  auto benign = ReadQueryFile(f.benign_queries);
  if (!benign.ok()) return FailCommand(env, benign.status());
  auto previous = Previous(store, *opened->repo, env.name_space, f.stack);
  if (!previous.ok()) return FailCommand(env, previous.status());
  auto memories = Memories(store, env.name_space);
  if (!memories.ok()) return FailCommand(env, memories.status());
  auto realizer = MakeRealizer(*store.impl().embedder);
  if (!realizer.ok()) return FailCommand(env, realizer.status());
  const honeypot::LexicalPotRealizer pot_realizer(**realizer);
  honeypot::FitOptions options;
  options.ratio = f.ratio;
  options.seed = f.seed;
  options.stack = f.stack;
  auto fit = honeypot::FitHoneypots(*memories, *attack, *benign, *store.impl().embedder, pot_realizer,
                                    options, *previous);
  if (!fit.ok()) return FailCommand(env, fit.status());
  auto run = StoreFit(store, *opened->repo, env.name_space, *fit, previous->last_batch + 1);
  if (!run.ok()) return FailCommand(env, run.status());
  if (env.json) {
    env.out << RunJson(*run).dump() << "\n";
  } else {
    PrintRun(env.out, *run);
  }
  return 0;
}

int RunShow(const CommandEnv& env) {
  auto opened = OpenAll(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto runs = CurrentRuns(*opened->repo, env.name_space);
  if (!runs.ok()) return FailCommand(env, runs.status());
  if (env.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const HoneypotRun& r : *runs) out.push_back(RunJson(r));
    env.out << nlohmann::json{{"namespace", env.name_space}, {"runs", out}}.dump() << "\n";
    return 0;
  }
  if (runs->empty()) env.out << "no honeypots in " << env.name_space << "\n";
  for (const HoneypotRun& r : *runs) PrintRun(env.out, r);
  return 0;
}

int RunList(const CommandEnv& env) {
  auto opened = OpenAll(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto pots = Pots(*opened->store, env.name_space);
  if (!pots.ok()) return FailCommand(env, pots.status());
  nlohmann::json out = nlohmann::json::array();
  for (const Entry& p : *pots) {
    if (env.json) {
      out.push_back({{"id", p.id}, {"text", p.text}, {"created_at_us", p.created_at_us}});
    } else {
      env.out << p.id << "  " << p.text << "\n";
    }
  }
  if (env.json) env.out << out.dump() << "\n";
  return 0;
}

int RunRemove(const CommandEnv& env) {
  auto opened = OpenAll(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto pots = Pots(*opened->store, env.name_space);
  if (!pots.ok()) return FailCommand(env, pots.status());
  for (const Entry& p : *pots) {
    if (auto s = opened->store->Delete(env.name_space, p.id, kHoneypotPrincipal); !s.ok())
      return FailCommand(env, s);
  }
  auto runs = opened->repo->RemoveRuns(env.name_space, opened->store->impl().env->NowMicros());
  if (!runs.ok()) return FailCommand(env, runs.status());
  if (env.json) {
    env.out << nlohmann::json{{"pots_removed", pots->size()}, {"runs_retired", *runs}}.dump() << "\n";
  } else {
    env.out << "removed " << pots->size() << " honeypots and retired " << *runs << " runs in "
            << env.name_space << "\n";
  }
  return 0;
}

// `sessions list|unblock` over the stored blocks. A running server keeps its own copy of the
// monitor: an unblock made here takes effect there at its next start (or use the admin route).
int RunSessions(const CommandEnv& env, bool unblock, const std::string& principal,
                const std::string& session) {
  auto opened = OpenAll(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto guard = HoneypotGuard::Create({}, opened->store->impl().entries.get(), opened->repo.get(), nullptr);
  if (!guard.ok()) return FailCommand(env, guard.status());
  if (unblock) {
    if (auto s = (*guard)->Unblock(env.name_space, principal, session); !s.ok()) return FailCommand(env, s);
    env.out << (env.json ? nlohmann::json{{"unblocked", true}}.dump() : std::string("unblocked")) << "\n";
    return 0;
  }
  auto blocked = (*guard)->Blocked(env.name_space);
  if (!blocked.ok()) return FailCommand(env, blocked.status());
  nlohmann::json out = nlohmann::json::array();
  for (const BlockedKey& b : *blocked) {
    out.push_back({{"namespace", b.name_space},
                   {"principal", b.principal},
                   {"session", b.session},
                   {"rounds", b.state.sprt.rounds},
                   {"pot_hits", b.state.pot_hits},
                   {"decided_at_us", b.state.decided_at_us}});
    if (!env.json) {
      env.out << b.name_space << "  " << b.principal << "  "
              << (b.session.empty() ? "(principal)" : b.session) << "  after " << b.state.sprt.decided_round
              << " searches, " << b.state.pot_hits << " pot hits\n";
    }
  }
  if (env.json) env.out << out.dump() << "\n";
  return 0;
}

// `honeypots mode MODE [--k-obs N]`: the namespace's stored monitor setting.
int RunMode(const CommandEnv& env, const std::string& mode, int k_obs) {
  auto parsed = ParseHoneypotMode(mode);
  if (!parsed.ok()) return FailCommand(env, parsed.status());
  auto opened = OpenAll(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  if (auto s = opened->repo->PutSetting({env.name_space, mode, k_obs}); !s.ok()) return FailCommand(env, s);
  if (env.json) {
    env.out << nlohmann::json{{"namespace", env.name_space}, {"mode", mode}, {"k_obs", k_obs}}.dump() << "\n";
  } else {
    env.out << "honeypot monitor of " << env.name_space << ": " << mode << ", k_obs " << k_obs
            << " (a running server applies it at its next start)\n";
  }
  return 0;
}

}  // namespace

struct HoneypotCommands::Flags {
  CLI::App* fit = nullptr;
  CLI::App* show = nullptr;
  CLI::App* list = nullptr;
  CLI::App* remove = nullptr;
  HoneypotFitFlags fit_flags;
  CLI::App* sessions_list = nullptr;
  CLI::App* sessions_unblock = nullptr;
  std::string principal, session;
  CLI::App* mode = nullptr;
  std::string mode_name;
  int k_obs = 4;
};

HoneypotCommands::HoneypotCommands() : flags_(std::make_unique<Flags>()) {}
HoneypotCommands::~HoneypotCommands() = default;

void HoneypotCommands::Register(CLI::App& app) {
  Flags& f = *flags_;
  CLI::App* group = app.add_subcommand("honeypots", "MemPot honeypots of a namespace (extraction detection)");
  group->require_subcommand(1);
  f.fit = group->add_subcommand("fit", "fit honeypots for the namespace (-n), write them and record the run");
  f.fit
      ->add_option("--attack-log", f.fit_flags.attack_logs,
                   "extraction attack log (JSONL with \"query\"); repeatable")
      ->required();
  f.fit->add_option("--benign-queries", f.fit_flags.benign_queries, "benign queries: one per line, or JSONL")
      ->required();
  f.fit->add_option("--ratio", f.fit_flags.ratio, "pots per covered memory")
      ->capture_default_str()
      ->check(CLI::Range(1e-6, 0.5));
  f.fit->add_option("--seed", f.fit_flags.seed, "seed (the fit is deterministic for a seed)")
      ->capture_default_str();
  f.fit->add_flag("--stack", f.fit_flags.stack,
                  "keep the current pots and add pots for the memories not yet covered");
  f.show = group->add_subcommand("show", "the namespace's current fit runs and their metrics");
  f.list = group->add_subcommand("list", "the namespace's honeypots (id and text)");
  f.remove = group->add_subcommand("remove", "delete every honeypot of the namespace and retire its runs");
  f.mode =
      group->add_subcommand("mode", "store the namespace's monitor mode (off | monitor | block) and k_obs");
  f.mode->add_option("mode", f.mode_name, "off | monitor | block")
      ->required()
      ->check(CLI::IsMember({"off", "monitor", "block"}));
  f.mode->add_option("--k-obs", f.k_obs, "rows of the observation")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));

  CLI::App* sessions = app.add_subcommand("sessions", "sessions and principals the honeypot monitor blocked");
  sessions->require_subcommand(1);
  f.sessions_list = sessions->add_subcommand("list", "the stored blocks of the namespace (-n)");
  f.sessions_unblock = sessions->add_subcommand("unblock", "clear one block (no --session: the principal's)");
  f.sessions_unblock->add_option("--principal", f.principal, "the blocked principal")->required();
  f.sessions_unblock->add_option("--session", f.session, "the blocked session id");
}

std::optional<int> HoneypotCommands::Run(const CommandEnv& env) {
  Flags& f = *flags_;
  if (f.fit->parsed()) return RunFit(env, f.fit_flags);
  if (f.show->parsed()) return RunShow(env);
  if (f.list->parsed()) return RunList(env);
  if (f.remove->parsed()) return RunRemove(env);
  if (f.mode->parsed()) return RunMode(env, f.mode_name, f.k_obs);
  if (f.sessions_list->parsed()) return RunSessions(env, false, "", "");
  if (f.sessions_unblock->parsed()) return RunSessions(env, true, f.principal, f.session);
  return std::nullopt;
}

}  // namespace bulwark::cli
