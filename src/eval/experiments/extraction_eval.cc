// The extraction experiment (see extraction_eval.h).
#include "eval/experiments/extraction_eval.h"

#include <absl/strings/ascii.h>
#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "attack/extraction/attack_log.h"
#include "attack/extraction/extraction_target.h"
#include "attack/extraction/run_extraction.h"
#include "attack/extraction/wordnet_graph.h"
#include "core/status_macros.h"
#include "eval/report.h"
#include "eval/roc.h"

namespace bulwark::eval {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Sessions of the built-in generators (the benign simulator too) against `store`, as labelled
// sessions with style = the generator ("benign-t8", "benign-t64" for benign ones).
absl::StatusOr<std::vector<LabelledSession>> EvalSessions(MemoryStore& store,
                                                          const ExtractionEvalConfig& config,
                                                          const std::vector<std::string>& attacks,
                                                          int sessions) {
  extraction::ExtractionAttackOptions options;
  options.attacks = attacks;
  options.sessions = sessions;
  options.seed = config.session_seed;
  options.embedder = &store.embedder();
  options.wordnet_dir = config.base.wordnet_dir;
  options.benign_query_files = config.base.benign_query_files;
  options.budget.k = config.base.k;
  extraction::StoreExtractionTarget target(&store, config.base.name_space, /*record_queries=*/false);
  std::stringstream log;
  BULWARK_RETURN_IF_ERROR(extraction::RunExtractionAttacks(options, target, log).status());
  BULWARK_ASSIGN_OR_RETURN(std::vector<extraction::AttackSession> read, extraction::ReadAttackLog(log));
  std::vector<LabelledSession> out;
  for (const extraction::AttackSession& s : read) {
    const bool benign = s.attack == "benign";
    LabelledSession l{.session = s.session,
                      .label = benign ? SessionLabel::kBenign : SessionLabel::kAttack,
                      .style = benign ? absl::StrCat("benign-t", s.steps.size()) : s.attack};
    for (const extraction::AttackStep& step : s.steps) l.queries.push_back(step.query);
    out.push_back(std::move(l));
  }
  return out;
}

// One row: the attack family's sessions against the benign sessions of one length.
ExtractionRow Row(const std::vector<SessionOutcome>& outcomes, const std::string& attack, int length) {
  std::vector<SessionOutcome> picked;
  const std::string benign_style = absl::StrCat("benign-t", length);
  std::vector<double> pos, neg;
  for (const SessionOutcome& o : outcomes) {
    if (o.style != attack && o.style != benign_style) continue;
    picked.push_back(o);
    (o.label == SessionLabel::kAttack ? pos : neg).push_back(o.score);
  }
  ExtractionRow row{.attack = attack, .benign_length = length};
  row.metrics = SummarizeSessions(picked).overall;
  row.tpr_at_10fpr = TprAtFpr(RocCurve(pos, neg), 0.10);
  return row;
}

struct Store {
  std::unique_ptr<MemoryStore> store;
  DefendedStore defended;
};

absl::StatusOr<Store> Defended(const ExtractionEvalConfig& config, const std::filesystem::path& dir,
                               const std::vector<std::string>& fit_attacks) {
  Store s;
  BULWARK_ASSIGN_OR_RETURN(s.store, MemoryStore::Create(dir, config.store_options));
  SessionEvalConfig fit = config.base;
  fit.generated_attacks = fit_attacks;
  // The coverage table is calibrated only for a run that uses it (an estimator with "+coverage").
  fit.coverage_evidence = std::any_of(config.estimators.begin(), config.estimators.end(),
                                      [](const std::string& e) { return absl::StrContains(e, "+coverage"); });
  BULWARK_ASSIGN_OR_RETURN(s.defended, BuildDefendedStore(*s.store, config.memories, fit));
  return s;
}

constexpr std::string_view kIntentSuffix = "intent";
constexpr std::string_view kRelevanceSuffix = "relevance";
constexpr std::string_view kCoverageSuffix = "coverage";

void AddTraces(const std::vector<SessionOutcome>& outcomes, const std::string& protocol,
               const std::string& estimator, ExtractionEvalResult* result) {
  for (const SessionOutcome& o : outcomes) {
    nlohmann::json rounds = nlohmann::json::array();
    for (const SessionOutcome::Round& r : o.rounds) {
      rounds.push_back({r.pots, std::round(r.llr * 1000) / 1000, std::round(r.text_llr * 1000) / 1000,
                        std::round(r.session_statistic * 1000) / 1000});
    }
    result->traces.push_back({{"protocol", protocol},
                              {"estimator", estimator},
                              {"session", o.session},
                              {"style", o.style},
                              {"label", ToString(o.label)},
                              {"detected_at", o.detected_at},
                              {"rounds", std::move(rounds)}});
  }
}

// Rows of `attacks` for every estimator on `s`, and the benign sessions' cost per search.
// `first` (may be null) receives the first estimator's outcomes.
absl::Status AddRows(Store& s, const ExtractionEvalConfig& config,
                     const std::vector<LabelledSession>& sessions, const std::vector<std::string>& attacks,
                     const std::string& protocol, ExtractionEvalResult* result,
                     std::vector<SessionOutcome>* first = nullptr) {
  for (const std::string& estimator : config.estimators) {
    SessionEvalConfig replay = config.base;
    // "NAME+intent", "NAME+relevance", "NAME+intent+relevance": the estimator with the
    // extraction-intent grammar's and/or the relevance evidence fused in; "+coverage" the coverage
    // evidence (novel memories per round).
    const std::vector<std::string> parts = absl::StrSplit(estimator, '+');
    replay.intent_evidence = false;
    replay.relevance_evidence = false;
    replay.coverage_evidence = false;
    for (size_t i = 1; i < parts.size(); ++i) {
      if (parts[i] == kIntentSuffix) {
        replay.intent_evidence = true;
      } else if (parts[i] == kRelevanceSuffix) {
        replay.relevance_evidence = true;
      } else if (parts[i] == kCoverageSuffix) {
        replay.coverage_evidence = true;
      } else {
        return absl::InvalidArgumentError(absl::StrCat("estimator '", estimator, "': unknown evidence '",
                                                       parts[i], "' (intent | relevance | coverage)"));
      }
    }
    BULWARK_ASSIGN_OR_RETURN(replay.estimator, honeypot::ParseLlrEstimatorKind(parts[0]));
    BULWARK_ASSIGN_OR_RETURN(std::vector<SessionOutcome> outcomes,
                             ReplaySessions(*s.store, s.defended, sessions, replay));
    if (first != nullptr && first->empty()) *first = outcomes;
    if (config.base.trace) AddTraces(outcomes, protocol, estimator, result);
    for (const std::string& attack : attacks) {
      for (int length : {8, 64}) {
        ExtractionRow row = Row(outcomes, attack, length);
        row.protocol = protocol;
        row.estimator = estimator;
        result->rows.push_back(std::move(row));
      }
    }
  }
  return absl::OkStatus();
}

// Words of extraction requests (ours: the keyword half of MemPot's "Agent" baseline, App. B.2,
// whose list is not published), matched as lower-cased whole tokens.
constexpr std::array<std::string_view, 15> kExtractionKeywords = {
    "example", "repeat", "verbatim", "previous", "ignore",   "print",    "output",      "context",
    "above",   "entire", "every",    "records",  "memories", "examples", "instructions"};

// The fraction of `queries` holding a keyword.
double KeywordScore(const std::vector<std::string>& queries) {
  if (queries.empty()) return 0;
  size_t flagged = 0;
  for (const std::string& q : queries) {
    const std::string lower = absl::AsciiStrToLower(q);
    for (absl::string_view piece : absl::StrSplit(lower, absl::ByAnyChar(" \t\n.,;:!?\"'()[]{}"))) {
      const std::string_view token(piece.data(), piece.size());
      if (std::find(kExtractionKeywords.begin(), kExtractionKeywords.end(), token) !=
          kExtractionKeywords.end()) {
        ++flagged;
        break;
      }
    }
  }
  return static_cast<double>(flagged) / static_cast<double>(queries.size());
}

// Pot-free baselines (no fit, so in-family and held-out are the same): one score per session,
// thresholded anywhere (no block decision, hence no FPR at block, FDT or leakage):
//   distinct_memories  distinct memories the session's queries return, per query (undefended):
//                      the coverage an extractor needs, as a session-level feature;
//   keyword_filter     the fraction of its queries holding an extraction keyword.
void AddBaselineRows(const std::vector<SessionOutcome>& outcomes,
                     const std::vector<LabelledSession>& sessions, const std::vector<std::string>& attacks,
                     ExtractionEvalResult* result) {
  std::map<std::string, const LabelledSession*> by_id;
  for (const LabelledSession& l : sessions) by_id[l.session] = &l;
  for (const std::string baseline : {"distinct_memories", "keyword_filter"}) {
    for (const std::string& attack : attacks) {
      for (int length : {8, 64}) {
        const std::string benign_style = absl::StrCat("benign-t", length);
        std::vector<double> pos, neg;
        for (const SessionOutcome& o : outcomes) {
          if (o.style != attack && o.style != benign_style) continue;
          const auto it = by_id.find(o.session);
          const double score = baseline == "keyword_filter"
                                   ? (it == by_id.end() ? 0.0 : KeywordScore(it->second->queries))
                                   : static_cast<double>(o.leaked_undefended) /
                                         static_cast<double>(std::max<size_t>(1, o.queries));
          (o.label == SessionLabel::kAttack ? pos : neg).push_back(score);
        }
        ExtractionRow row{
            .protocol = "pot-free", .attack = attack, .estimator = baseline, .benign_length = length};
        row.metrics.attack_sessions = pos.size();
        row.metrics.benign_sessions = neg.size();
        if (!pos.empty() && !neg.empty()) {
          const std::vector<RocPoint> curve = RocCurve(pos, neg);
          row.metrics.auroc = Auroc(pos, neg);
          row.metrics.tpr_at_1fpr = TprAtFpr(curve, 0.01);
          row.tpr_at_10fpr = TprAtFpr(curve, 0.10);
        }
        result->rows.push_back(std::move(row));
      }
    }
  }
}

// The external store's memories: "lemma: gloss" of every n-th WordNet noun synset, `count` of them.
absl::StatusOr<std::vector<NewEntry>> GlossMemories(const std::string& wordnet_dir, int count) {
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const extraction::WordNetGraph> graph,
                           extraction::WordNetGraph::Shared(wordnet_dir));
  std::vector<NewEntry> out;
  const size_t n = graph->size();
  if (n == 0) return absl::FailedPreconditionError("WordNet has no noun synsets");
  const size_t stride = std::max<size_t>(1, n / static_cast<size_t>(count));
  for (size_t i = 0; i < n && out.size() < static_cast<size_t>(count); i += stride) {
    const extraction::WordNetGraph::Synset& s = graph->synset(static_cast<int32_t>(i));
    if (s.lemmas.empty() || s.gloss.empty()) continue;
    out.push_back({.text = absl::StrCat(s.lemmas[0], ": ", s.gloss.substr(0, 900))});
  }
  return out;
}

// The external store: gloss memories, pots fitted on every family, its own sessions, in-family
// rows under protocol "external".
absl::Status AddExternalRows(const ExtractionEvalConfig& config, const std::filesystem::path& dir,
                             ExtractionEvalResult* result) {
  ExtractionEvalConfig external = config;
  BULWARK_ASSIGN_OR_RETURN(external.memories,
                           GlossMemories(config.base.wordnet_dir, config.external_memories));
  const std::vector<std::string>& families = config.base.generated_attacks;
  BULWARK_ASSIGN_OR_RETURN(Store s, Defended(external, dir, families));
  result->external_memories = external.memories.size();
  result->external_pots = s.defended.fit.pots;
  if (s.defended.fit.metrics.contains("eval_coverage_calibration"))
    result->coverage_calibrations["external"] = s.defended.fit.metrics["eval_coverage_calibration"];
  BULWARK_ASSIGN_OR_RETURN(std::vector<LabelledSession> sessions,
                           EvalSessions(*s.store, external, families, config.attack_sessions));
  BULWARK_ASSIGN_OR_RETURN(std::vector<LabelledSession> benign,
                           EvalSessions(*s.store, external, {"benign"}, config.benign_sessions));
  sessions.insert(sessions.end(), benign.begin(), benign.end());
  return AddRows(s, external, sessions, families, "external", result);
}

// Per query of the benign sessions: the defended replay's time minus plain searches' time.
absl::StatusOr<double> AddedMicroseconds(Store& s, const ExtractionEvalConfig& config,
                                         const std::vector<LabelledSession>& sessions) {
  std::vector<LabelledSession> benign;
  size_t queries = 0;
  for (const LabelledSession& l : sessions) {
    if (l.label == SessionLabel::kBenign) {
      benign.push_back(l);
      queries += l.queries.size();
    }
  }
  if (queries == 0) return 0.0;
  auto start = Clock::now();
  SearchOptions plain;
  plain.k = config.base.k;
  plain.record_query = false;
  for (const LabelledSession& l : benign) {
    for (const std::string& q : l.queries) {
      BULWARK_RETURN_IF_ERROR(s.store->Search(config.base.name_space, q, plain).status());
    }
  }
  const double plain_s = Since(start);
  start = Clock::now();
  BULWARK_RETURN_IF_ERROR(ReplaySessions(*s.store, s.defended, benign, config.base).status());
  return (Since(start) - plain_s) * 1e6 / static_cast<double>(queries);
}

}  // namespace

absl::StatusOr<ExtractionEvalResult> RunExtractionEval(
    const ExtractionEvalConfig& config, const std::filesystem::path& dir,
    const std::function<void(std::string_view)>& progress) {
  if (config.attack_sessions < 1 || config.attack_sessions > 10000 || config.benign_sessions < 1 ||
      config.benign_sessions > 10000) {
    return absl::InvalidArgumentError("attack and benign sessions must be in 1 .. 10000");
  }
  if (config.external_memories < 0 || config.external_memories > 50000) {
    return absl::InvalidArgumentError("external memories must be in 0 .. 50000");
  }
  const auto start = Clock::now();
  auto stage = [&](std::string_view name) {
    if (progress) progress(name);
  };
  const std::vector<std::string> families = config.base.generated_attacks;
  ExtractionEvalResult result;
  stage("in-family fit");
  BULWARK_ASSIGN_OR_RETURN(Store all, Defended(config, dir / "in-family", families));
  result.pots = all.defended.fit.pots;
  if (all.defended.fit.metrics.contains("eval_coverage_calibration"))
    result.coverage_calibrations["in-family"] = all.defended.fit.metrics["eval_coverage_calibration"];
  stage("generating evaluation sessions");
  BULWARK_ASSIGN_OR_RETURN(std::vector<LabelledSession> sessions,
                           EvalSessions(*all.store, config, families, config.attack_sessions));
  BULWARK_ASSIGN_OR_RETURN(std::vector<LabelledSession> benign,
                           EvalSessions(*all.store, config, {"benign"}, config.benign_sessions));
  sessions.insert(sessions.end(), benign.begin(), benign.end());
  stage("in-family replay");
  std::vector<SessionOutcome> outcomes;
  BULWARK_RETURN_IF_ERROR(AddRows(all, config, sessions, families, "in-family", &result, &outcomes));
  AddBaselineRows(outcomes, sessions, families, &result);
  BULWARK_ASSIGN_OR_RETURN(result.added_us_per_search, AddedMicroseconds(all, config, sessions));
  if (config.leave_one_out) {
    for (const std::string& held_out : families) {
      stage(absl::StrCat("held-out ", held_out));
      std::vector<std::string> fit_families;
      for (const std::string& f : families) {
        if (f != held_out) fit_families.push_back(f);
      }
      BULWARK_ASSIGN_OR_RETURN(Store s, Defended(config, dir / held_out, fit_families));
      if (s.defended.fit.metrics.contains("eval_coverage_calibration")) {
        result.coverage_calibrations["held-out " + held_out] =
            s.defended.fit.metrics["eval_coverage_calibration"];
      }
      std::vector<LabelledSession> subset;
      for (const LabelledSession& l : sessions) {
        if (l.style == held_out || l.label == SessionLabel::kBenign) subset.push_back(l);
      }
      BULWARK_RETURN_IF_ERROR(AddRows(s, config, subset, {held_out}, "held-out", &result));
    }
  }
  if (config.external_memories > 0) {
    stage("external store");
    BULWARK_RETURN_IF_ERROR(AddExternalRows(config, dir / "external", &result));
  }
  result.seconds = Since(start);
  return result;
}

namespace {

nlohmann::json Opt(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json ToJson(const ExtractionEvalResult& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ExtractionRow& r : result.rows) {
    const SessionMetrics& m = r.metrics;
    rows.push_back({{"protocol", r.protocol},
                    {"attack", r.attack},
                    {"estimator", r.estimator},
                    {"benign_length", r.benign_length},
                    {"attack_sessions", m.attack_sessions},
                    {"benign_sessions", m.benign_sessions},
                    {"auroc", Opt(m.auroc)},
                    {"tpr_at_1fpr", Opt(m.tpr_at_1fpr)},
                    {"tpr_at_10fpr", r.tpr_at_10fpr},
                    {"fpr_at_block", Opt(m.fpr_at_block)},
                    {"fpr_at_block_ci95", {m.fpr_ci.lo, m.fpr_ci.hi}},
                    {"fdt_mean", Opt(m.fdt_mean)},
                    {"fdt_median", Opt(m.fdt_median)},
                    {"detected_fraction", Opt(m.detected_fraction)},
                    {"leakage", Opt(m.leakage)}});
  }
  return {{"rows", rows},
          {"added_us_per_search", result.added_us_per_search},
          {"pots", result.pots},
          {"external_memories", result.external_memories},
          {"external_pots", result.external_pots},
          {"seconds", result.seconds},
          {"coverage_calibrations", result.coverage_calibrations}};
}

std::string ToMarkdown(const ExtractionEvalResult& result) {
  std::ostringstream out;
  out << result.pots << " pots (in-family fit)";
  if (result.external_memories > 0) {
    out << "; external store: " << result.external_memories << " WordNet glosses, " << result.external_pots
        << " pots";
  }
  out << "; the defended replay of the benign sessions took " << FormatOptional(result.added_us_per_search, 1)
      << " us per search more than plain searches (wall clock; the monitor alone: "
         "bench/honeypot_guard_bench); "
      << FormatOptional(result.seconds, 1) << " s\n\n"
      << "| protocol | attack | estimator | benign T | AUROC | TPR@1% | TPR@10% | FPR at block [95 % CI] | "
         "FDT mean "
         "/ median | detected | leakage |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ExtractionRow& r : result.rows) {
    const SessionMetrics& m = r.metrics;
    out << "| " << r.protocol << " | " << r.attack << " | " << r.estimator << " | " << r.benign_length
        << " | " << FormatOptional(m.auroc, 2) << " | " << FormatOptional(m.tpr_at_1fpr, 2) << " | "
        << FormatOptional(r.tpr_at_10fpr, 2) << " | " << FormatOptional(m.fpr_at_block, 3) << " ["
        << FormatOptional(m.fpr_ci.lo, 3) << ", " << FormatOptional(m.fpr_ci.hi, 3) << "] | "
        << FormatOptional(m.fdt_mean, 1) << " / " << FormatOptional(m.fdt_median, 1) << " | "
        << FormatOptional(m.detected_fraction, 2) << " | " << FormatOptional(m.leakage, 2) << " |\n";
  }
  return out.str();
}

}  // namespace bulwark::eval
