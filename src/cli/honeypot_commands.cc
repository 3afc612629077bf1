// The `bulwark honeypots` subcommands (see honeypot_commands.h).
#include "cli/honeypot_commands.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/honeypot_monitor_commands.h"
#include "cli/query_file.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "embed/wordnet_canonicalizer.h"
#include "honeypot/bigram_lm.h"
#include "honeypot/honeypot_fit.h"
#include "honeypot/intent_cap.h"
#include "honeypot/intent_evidence.h"
#include "honeypot/lexical_realizer.h"
#include "honeypot/sprt.h"
#include "retrieval/honeypot_guard.h"
#include "retrieval/honeypot_intent_table.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {
// The flags of `honeypots fit` (named, not anonymous: HoneypotCommands::Flags holds one).
struct HoneypotFitFlags {
  std::vector<std::string> attack_logs;
  std::string benign_queries;
  double ratio = 0.03;
  double unseen_weight = honeypot::FitOptions{}.unseen_weight;
  uint64_t seed = 0;
  bool stack = false;
};

namespace {

constexpr char kHoneypotPrincipal[] = "bulwark:honeypots";

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
                           honeypot::BigramLm::SharedWordNet(dir));
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

// Calibrates the extraction-intent table on the fit's benign and attack queries (the grammar is not
// trained on them: p0 per category, p1 pooled; honeypot/intent_evidence.h) and stores it signed
// with the run, replacing the namespace's previous table. Its cap lets two explicit requests block
// even in rounds that draw no pot, at the default SPRT (honeypot/intent_cap.h; 1.79 with the
// default unseen weight); where a pot-less round's cost has no bound below log A / 2 (unseen weight
// 0 without a count clamp) it stays at the grammar's default (1.1). Returns the table.
absl::StatusOr<honeypot::IntentCalibration> StoreIntentTable(MemoryStore& store, HoneypotRepository& repo,
                                                             std::string_view ns, int64_t run_id,
                                                             const std::vector<std::string>& attack,
                                                             const std::vector<std::string>& benign,
                                                             const honeypot::FitOptions& fit) {
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<honeypot::IntentGrammar> grammar,
                           honeypot::IntentGrammar::Default());
  BULWARK_ASSIGN_OR_RETURN(honeypot::Sprt sprt, honeypot::Sprt::Create(honeypot::SprtOptions{}));
  const absl::StatusOr<double> cap =
      honeypot::TwoRequestIntentCap(sprt.upper(), fit.unseen_weight, fit.calibration_cap);
  BULWARK_ASSIGN_OR_RETURN(honeypot::IntentCalibration table,
                           cap.ok() ? honeypot::IntentCalibration::Fit(*grammar, benign, attack, *cap)
                                    : honeypot::IntentCalibration::Fit(*grammar, benign, attack));
  IntentTableStore tables(&repo, &store.impl().entries->keyring());
  if (auto s = tables.Put(ns, run_id, table); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("the pots and their run were stored but not the intent table "
                                               "(fit again with --stack, or remove): ",
                                               s.message()));
  }
  return table;
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
  auto opened = OpenHoneypotStore(env);
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
  options.unseen_weight = f.unseen_weight;
  options.seed = f.seed;
  options.stack = f.stack;
  auto fit = honeypot::FitHoneypots(*memories, *attack, *benign, *store.impl().embedder, pot_realizer,
                                    options, *previous);
  if (!fit.ok()) return FailCommand(env, fit.status());
  auto run = StoreFit(store, *opened->repo, env.name_space, *fit, previous->last_batch + 1);
  if (!run.ok()) return FailCommand(env, run.status());
  auto intent =
      StoreIntentTable(store, *opened->repo, env.name_space, run->run_id, *attack, *benign, options);
  if (!intent.ok()) return FailCommand(env, intent.status());
  if (env.json) {
    nlohmann::json out = RunJson(*run);
    out["intent"] = intent->ToJson();
    env.out << out.dump() << "\n";
  } else {
    PrintRun(env.out, *run);
    env.out << "  intent table (serve adds it; `honeypots mode ... --intent off` does not):";
    for (size_t c = 0; c < intent->categories.size(); ++c)
      env.out << " " << intent->categories[c] << " " << intent->llr[c];
    env.out << "\n";
  }
  return 0;
}

int RunShow(const CommandEnv& env) {
  auto opened = OpenHoneypotStore(env);
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
  auto opened = OpenHoneypotStore(env);
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
  auto opened = OpenHoneypotStore(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto pots = Pots(*opened->store, env.name_space);
  if (!pots.ok()) return FailCommand(env, pots.status());
  for (const Entry& p : *pots) {
    if (auto s = opened->store->Delete(env.name_space, p.id, kHoneypotPrincipal); !s.ok())
      return FailCommand(env, s);
  }
  auto runs = opened->repo->RemoveRuns(env.name_space, opened->store->impl().env->NowMicros());
  if (!runs.ok()) return FailCommand(env, runs.status());
  auto tables = opened->repo->DeleteIntentTable(env.name_space);
  if (!tables.ok()) return FailCommand(env, tables.status());
  if (env.json) {
    env.out << nlohmann::json{{"pots_removed", pots->size()},
                              {"runs_retired", *runs},
                              {"intent_tables_removed", *tables}}
                   .dump()
            << "\n";
  } else {
    env.out << "removed " << pots->size() << " honeypots and retired " << *runs << " runs in "
            << env.name_space << "\n";
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
  std::string mode_name, estimator, h0, intent;
  int k_obs = 4;
  double calibration_cap = 0, alpha = 0.1, beta = 0.1;
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
  f.fit
      ->add_option("--unseen-weight", f.fit_flags.unseen_weight,
                   "share of an extractor's queries the pots are assumed to tell nothing about "
                   "(rho of the calibrated count table: an empty observation costs at most -log rho)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.999));
  f.fit->add_option("--seed", f.fit_flags.seed, "seed (the fit is deterministic for a seed)")
      ->capture_default_str();
  f.fit->add_flag("--stack", f.fit_flags.stack,
                  "keep the current pots and add pots for the memories not yet covered");
  f.show = group->add_subcommand("show", "the namespace's current fit runs and their metrics");
  f.list = group->add_subcommand("list", "the namespace's honeypots (id and text)");
  f.remove = group->add_subcommand("remove", "delete every honeypot of the namespace and retire its runs");
  f.mode =
      group->add_subcommand("mode",
                            "store the namespace's monitor setting: mode (off | monitor | block), k_obs, "
                            "estimator and SPRT");
  f.mode->add_option("mode", f.mode_name, "off | monitor | block")
      ->required()
      ->check(CLI::IsMember({"off", "monitor", "block"}));
  f.mode->add_option("--k-obs", f.k_obs, "rows of the observation (default 4)")->check(CLI::Range(1, 64));
  f.mode
      ->add_option("--estimator", f.estimator,
                   "per-round LLR: count (Eq. 17, default) | similarity (Eq. 18) | count_calibrated (the "
                   "newest fit run's table)")
      ->check(CLI::IsMember({"count", "similarity", "count_calibrated"}));
  f.mode->add_option("--calibration-cap", f.calibration_cap,
                     "count_calibrated: clamp the table to [-cap, cap] (0: none)");
  f.mode->add_option("--h0", f.h0, "the SPRT's H0 policy: restart (default) | floor | cusum")
      ->check(CLI::IsMember({"restart", "floor", "cusum"}));
  f.mode->add_option("--alpha", f.alpha, "the SPRT's false-block budget (default 0.1)");
  f.mode->add_option("--beta", f.beta, "the SPRT's miss budget (default 0.1)");
  f.mode
      ->add_option(
          "--intent", f.intent,
          "add the extraction-intent table the fit stored to every search's evidence: on (default) | off")
      ->check(CLI::IsMember({"on", "off"}));

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
  if (f.mode->parsed()) {
    nlohmann::json given = {{"mode", f.mode_name}};
    if (f.mode->count("--k-obs") > 0) given["k_obs"] = f.k_obs;
    if (f.mode->count("--estimator") > 0) given["estimator"] = f.estimator;
    if (f.mode->count("--calibration-cap") > 0) given["calibration_cap"] = f.calibration_cap;
    if (f.mode->count("--h0") > 0) given["h0"] = f.h0;
    if (f.mode->count("--alpha") > 0) given["alpha"] = f.alpha;
    if (f.mode->count("--beta") > 0) given["beta"] = f.beta;
    if (f.mode->count("--intent") > 0) given["intent"] = f.intent == "on";
    return RunHoneypotMode(env, given);
  }
  if (f.sessions_list->parsed()) return RunHoneypotSessions(env, false, "", "");
  if (f.sessions_unblock->parsed()) return RunHoneypotSessions(env, true, f.principal, f.session);
  return std::nullopt;
}

}  // namespace bulwark::cli
