// The session experiment of `bulwark-lab eval sessions` (see session_eval.h).
#include "eval/experiments/session_eval.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "attack/extraction/attack_log.h"
#include "attack/extraction/extraction_target.h"
#include "attack/extraction/run_extraction.h"
#include "core/status_macros.h"
#include "embed/wordnet_canonicalizer.h"
#include "eval/roc.h"
#include "honeypot/bigram_lm.h"
#include "honeypot/lexical_realizer.h"
#include "retrieval/defended_retriever.h"
#include "retrieval/honeypot_guard.h"
#include "store/memory_store_impl.h"

namespace bulwark::eval {
namespace {

using Json = nlohmann::json;
using honeypot::LlrEstimatorKind;

constexpr char kOwner[] = "eval:owner";
constexpr char kPotPrincipal[] = "bulwark:honeypots";  // as `bulwark honeypots fit` writes them
// Subtracted per query index from the session score: orders equal maxima by how early they came,
// and is too small (<= 1e-3 over 1,000 queries) to reorder different maxima of the LLRs.
constexpr double kTieBreakPerQuery = 1e-6;

absl::Status ValidateConfig(const SessionEvalConfig& config) {
  if (config.k < 1 || config.k > 1000) return absl::InvalidArgumentError("k must be in 1 .. 1000");
  if (config.k_obs < 1 || config.k_obs > 64) return absl::InvalidArgumentError("k_obs must be in 1 .. 64");
  if (config.estimator == LlrEstimatorKind::kGlobalSimilarity) {
    return absl::InvalidArgumentError(
        "the global_similarity estimator is not available on the read path (the guard observes the top "
        "k_obs)");
  }
  if (config.generated_sessions < 1 || config.generated_sessions > 1000) {
    return absl::InvalidArgumentError("generated sessions must be in 1 .. 1000");
  }
  if (config.benign_queries.empty() && config.benign_query_files.empty()) {
    return absl::InvalidArgumentError("the fit needs benign queries or a benign query file");
  }
  return absl::OkStatus();
}

// Runs built-in generators (attack names of extraction::ExtractionAttackNames) against the
// store and returns the queries of their log, in order.
absl::StatusOr<std::vector<std::string>> GeneratedQueries(MemoryStore& store, const SessionEvalConfig& config,
                                                          std::vector<std::string> attacks) {
  extraction::ExtractionAttackOptions options;
  options.attacks = std::move(attacks);
  options.sessions = config.generated_sessions;
  options.seed = config.generator_seed;
  options.embedder = &store.embedder();
  options.wordnet_dir = config.wordnet_dir;
  options.benign_query_files = config.benign_query_files;
  options.budget.k = config.k;
  extraction::StoreExtractionTarget target(&store, config.name_space, /*record_queries=*/false);
  std::stringstream log;
  BULWARK_RETURN_IF_ERROR(extraction::RunExtractionAttacks(options, target, log).status());
  BULWARK_ASSIGN_OR_RETURN(std::vector<extraction::AttackSession> sessions,
                           extraction::ReadAttackLog(log, "generated log"));
  std::vector<std::string> queries;
  for (const extraction::AttackSession& s : sessions) {
    for (const extraction::AttackStep& step : s.steps) queries.push_back(step.query);
  }
  return queries;
}

absl::StatusOr<std::vector<honeypot::FitMemory>> ActiveMemories(MemoryStore& store, std::string_view ns) {
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

// The lexical realiser over the store's embedder and the WordNet glosses (as `honeypots fit`).
absl::StatusOr<std::unique_ptr<honeypot::LexicalRealizer>> MakeRealizer(const Embedder& embedder,
                                                                        const std::string& dir) {
  BULWARK_RETURN_IF_ERROR(WordNetCanonicalizer::CheckDataPresent(dir));
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const honeypot::BigramLm> lm,
                           honeypot::BigramLm::SharedWordNet(dir));
  BULWARK_ASSIGN_OR_RETURN(auto wordnet, WordNetCanonicalizer::Shared(dir));
  return honeypot::LexicalRealizer::Create(embedder, lm,
                                           honeypot::LexicalRealizer::DefaultVocabulary(*lm, wordnet.get()));
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

namespace {

// Questions near the memories themselves (benign users ask about what is stored): the first 10
// words of each of up to 1,000 evenly spaced memories.
std::vector<std::string> MemoryQueries(const std::vector<honeypot::FitMemory>& memories) {
  std::vector<std::string> out;
  const size_t step = std::max<size_t>(1, memories.size() / 1000);
  for (size_t i = 0; i < memories.size(); i += step) {
    std::istringstream words(memories[i].text);
    std::string word, query;
    for (int n = 0; n < 10 && words >> word; ++n) absl::StrAppend(&query, n ? " " : "", word);
    if (!query.empty()) out.push_back(std::move(query));
  }
  return out;
}

// Even positions to the fit, odd ones to the calibration (everything to both when !split).
void Split(const std::vector<std::string>& all, bool split, std::vector<std::string>* fit,
           std::vector<std::string>* calibrate) {
  for (size_t i = 0; i < all.size(); ++i) {
    if (!split || i % 2 == 0) fit->push_back(all[i]);
    if (!split || i % 2 == 1) calibrate->push_back(all[i]);
  }
}

// The pot counts that `queries` draw in the top k_obs of the namespace's observation.
absl::StatusOr<std::vector<int>> PotCounts(MemoryStore& store, const SessionEvalConfig& config,
                                           const std::vector<std::string>& queries) {
  std::vector<int> counts;
  for (const std::string& q : queries) {
    BULWARK_ASSIGN_OR_RETURN(std::vector<float> embedding, store.embedder().Embed(q));
    BULWARK_ASSIGN_OR_RETURN(auto rows,
                             store.impl().entries->Observe(config.name_space, embedding, config.k_obs));
    int pots = 0;
    for (const auto& r : rows) pots += r.is_pot ? 1 : 0;
    counts.push_back(pots);
  }
  return counts;
}

struct TrainingQueries {
  std::vector<std::string> attack, benign;
};

// The fit's positives (given, or generated) and negatives (given + simulated + memory-derived).
absl::StatusOr<TrainingQueries> Training(MemoryStore& store, const SessionEvalConfig& config,
                                         const std::vector<honeypot::FitMemory>& active, SessionEvalFit* fit,
                                         const std::function<void(std::string_view)>& stage) {
  TrainingQueries t{config.attack_queries, config.benign_queries};
  fit->generated_attacks = t.attack.empty();
  if (t.attack.empty()) {
    stage("generating attack logs");
    BULWARK_ASSIGN_OR_RETURN(t.attack, GeneratedQueries(store, config, config.generated_attacks));
  }
  if (!config.benign_query_files.empty()) {
    stage("generating benign sessions");
    BULWARK_ASSIGN_OR_RETURN(std::vector<std::string> simulated, GeneratedQueries(store, config, {"benign"}));
    t.benign.insert(t.benign.end(), simulated.begin(), simulated.end());
  }
  if (config.memory_queries) {
    const std::vector<std::string> near = MemoryQueries(active);
    t.benign.insert(t.benign.end(), near.begin(), near.end());
  }
  fit->attack_queries = t.attack.size();
  fit->benign_queries = t.benign.size();
  return t;
}

}  // namespace

absl::StatusOr<DefendedStore> BuildDefendedStore(MemoryStore& store, std::span<const NewEntry> memories,
                                                 const SessionEvalConfig& config,
                                                 const std::function<void(std::string_view)>& progress) {
  BULWARK_RETURN_IF_ERROR(ValidateConfig(config));
  if (memories.empty()) return absl::InvalidArgumentError("no memories");
  const auto start = std::chrono::steady_clock::now();
  auto stage = [&](std::string_view name) {
    if (progress) progress(name);
  };
  DefendedStore out;
  stage("writing memories");
  BULWARK_ASSIGN_OR_RETURN(std::vector<Entry> written, store.AddBatch(config.name_space, memories, kOwner));
  out.fit.memories = written.size();
  for (const Entry& e : written) out.fit.quarantined += e.state == State::kActive ? 0 : 1;
  BULWARK_ASSIGN_OR_RETURN(std::vector<honeypot::FitMemory> active, ActiveMemories(store, config.name_space));
  BULWARK_ASSIGN_OR_RETURN(TrainingQueries all, Training(store, config, active, &out.fit, stage));
  TrainingQueries fit_set, calibration_set;
  Split(all.attack, config.heldout_calibration, &fit_set.attack, &calibration_set.attack);
  Split(all.benign, config.heldout_calibration, &fit_set.benign, &calibration_set.benign);

  stage("fitting honeypots");
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<honeypot::LexicalRealizer> realizer,
                           MakeRealizer(store.embedder(), config.wordnet_dir));
  const honeypot::LexicalPotRealizer pot_realizer(*realizer);
  BULWARK_ASSIGN_OR_RETURN(honeypot::FitResult fit,
                           honeypot::FitHoneypots(active, fit_set.attack, fit_set.benign, store.embedder(),
                                                  pot_realizer, config.fit));
  std::vector<WritePipeline::SystemEntry> pots;
  for (const honeypot::FittedPot& p : fit.pots) pots.push_back({p.text, Json::object(), p.vector});
  BULWARK_RETURN_IF_ERROR(
      store.impl()
          .pipeline->AddSystemEntries(config.name_space, pots, Kind::kHoneypot, kPotPrincipal)
          .status());
  out.fit.pots = pots.size();
  out.fit.metrics = std::move(fit.metrics);
  // The count LLR table from queries the pots were not trained on (research/mempot.md 2.5).
  BULWARK_ASSIGN_OR_RETURN(std::vector<int> benign_counts, PotCounts(store, config, calibration_set.benign));
  BULWARK_ASSIGN_OR_RETURN(std::vector<int> attack_counts, PotCounts(store, config, calibration_set.attack));
  BULWARK_ASSIGN_OR_RETURN(
      out.calibration,
      honeypot::CountCalibration::Fit(benign_counts, attack_counts, config.k_obs, config.calibration_cap));
  out.fit.metrics["eval_calibration"] = out.calibration.ToJson();
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const honeypot::IntentGrammar> grammar,
                           honeypot::IntentGrammar::Default());
  BULWARK_ASSIGN_OR_RETURN(honeypot::IntentCalibration intent,
                           honeypot::IntentCalibration::Fit(*grammar, calibration_set.benign,
                                                            calibration_set.attack, config.intent_cap));
  out.fit.metrics["eval_intent_calibration"] = intent.ToJson();
  BULWARK_ASSIGN_OR_RETURN(out.intent, honeypot::IntentEvidence::Create(grammar, std::move(intent)));
  out.fit.seconds = SecondsSince(start);
  return out;
}

namespace {

// Replays one session through `retriever` (guard attached) and counts its undefended leakage.
absl::StatusOr<SessionOutcome> ReplayOne(MemoryStore& store, DefendedRetriever& retriever,
                                         const LabelledSession& s, const SessionEvalConfig& config) {
  SessionOutcome out{.session = s.session, .label = s.label, .style = s.style, .queries = s.queries.size()};
  absl::flat_hash_set<std::string> defended, undefended;
  bool scored = false;
  DefendedSearchRequest request;
  request.name_space = config.name_space;
  request.search.k = config.k;
  request.search.record_query = false;
  request.principal = absl::StrCat("eval:", s.session);
  request.session = s.session;
  for (size_t t = 0; t < s.queries.size(); ++t) {
    request.query = s.queries[t];
    absl::StatusOr<DefendedSearchResult> result = retriever.Search(request);
    if (!result.ok() && result.status().code() != absl::StatusCode::kPermissionDenied) return result.status();
    if (!result.ok()) {  // blocked: what the store would have returned without the defense
      ++out.refused;
      SearchOptions plain;
      plain.k = config.k;
      plain.record_query = false;
      BULWARK_ASSIGN_OR_RETURN(SearchResult hits, store.Search(config.name_space, s.queries[t], plain));
      for (const SearchHit& h : hits.hits) undefended.insert(h.entry.id);
      continue;
    }
    for (const SearchHit& h : result->search.hits) {
      defended.insert(h.entry.id);
      undefended.insert(h.entry.id);
    }
    if (result->honeypot) {
      // After an H0 decision the monitor reports S reset to 0; the round's value was <= log B.
      const honeypot::MonitorVerdict& v = *result->honeypot;
      const double lower = std::log(config.sprt.beta / (1 - config.sprt.alpha));
      const double st = std::max(v.session == honeypot::SprtDecision::kH0 ? lower : v.session_statistic,
                                 v.principal == honeypot::SprtDecision::kH0 ? lower : v.principal_statistic);
      // Ties of the maximum (capped LLRs make many) go to the session that reached it first.
      const double tie_broken = st - kTieBreakPerQuery * static_cast<double>(t + 1);
      out.score = scored ? std::max(out.score, tie_broken) : tie_broken;
      scored = true;
      if (v.blocked && out.detected_at == 0) out.detected_at = t + 1;
    }
  }
  out.leaked = defended.size();
  out.leaked_undefended = undefended.size();
  return out;
}

}  // namespace

absl::StatusOr<std::vector<SessionOutcome>> ReplaySessions(
    MemoryStore& store, const DefendedStore& defended, std::span<const LabelledSession> sessions,
    const SessionEvalConfig& config, const std::function<void(size_t, size_t)>& progress) {
  BULWARK_RETURN_IF_ERROR(ValidateConfig(config));
  HoneypotGuardOptions options;
  options.default_mode = HoneypotMode::kBlock;
  options.k_obs = config.k_obs;
  options.monitor.sprt = config.sprt;
  options.monitor.llr.kind = config.estimator;
  if (config.estimator == LlrEstimatorKind::kCountCalibrated)
    options.monitor.llr.calibration = defended.calibration;
  if (config.intent_evidence) options.intent = defended.intent;
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<HoneypotGuard> guard,
                           HoneypotGuard::Create(options, store.impl().entries.get(), nullptr, nullptr));
  DefendedRetriever retriever(&store, nullptr, nullptr);
  retriever.SetHoneypotGuard(guard.get());
  std::vector<SessionOutcome> outcomes;
  outcomes.reserve(sessions.size());
  for (const LabelledSession& s : sessions) {
    BULWARK_ASSIGN_OR_RETURN(SessionOutcome o, ReplayOne(store, retriever, s, config));
    outcomes.push_back(std::move(o));
    if (progress) progress(outcomes.size(), sessions.size());
  }
  return outcomes;
}

namespace {

using OutcomeRefs = std::vector<const SessionOutcome*>;

// The metrics of positives `pos` against negatives `neg`; one-sided numbers only when the
// corresponding `own_*` flag says the side belongs to the row.
SessionMetrics Metrics(const OutcomeRefs& pos, const OutcomeRefs& neg, bool own_pos, bool own_neg) {
  SessionMetrics m;
  m.attack_sessions = pos.size();
  m.benign_sessions = neg.size();
  std::vector<double> p, n;
  for (const SessionOutcome* o : pos) p.push_back(o->score);
  for (const SessionOutcome* o : neg) n.push_back(o->score);
  if (!p.empty() && !n.empty()) {
    m.auroc = Auroc(p, n);
    m.tpr_at_1fpr = TprAtFpr(RocCurve(p, n), 0.01);
  }
  for (const SessionOutcome* o : neg) m.benign_blocked += o->detected_at > 0 ? 1 : 0;
  if (own_neg && !neg.empty()) {
    m.fpr_at_block = static_cast<double>(m.benign_blocked) / static_cast<double>(neg.size());
    m.fpr_ci = ClopperPearson(static_cast<int64_t>(m.benign_blocked), static_cast<int64_t>(neg.size()));
  }
  std::vector<double> fdt;
  for (const SessionOutcome* o : pos) {
    if (o->detected_at > 0) fdt.push_back(static_cast<double>(o->detected_at));
    m.leaked += o->leaked;
    m.leaked_undefended += o->leaked_undefended;
  }
  m.detected = fdt.size();
  if (own_pos && !pos.empty()) {
    m.detected_fraction = static_cast<double>(fdt.size()) / static_cast<double>(pos.size());
    m.leakage = m.leaked_undefended == 0
                    ? 0.0
                    : static_cast<double>(m.leaked) / static_cast<double>(m.leaked_undefended);
    if (!fdt.empty()) {
      double sum = 0;
      for (double d : fdt) sum += d;
      m.fdt_mean = sum / static_cast<double>(fdt.size());
      std::sort(fdt.begin(), fdt.end());
      const size_t h = fdt.size() / 2;
      m.fdt_median = fdt.size() % 2 == 1 ? fdt[h] : (fdt[h - 1] + fdt[h]) / 2;
    }
  }
  return m;
}

Json Num(const std::optional<double>& v) { return v && std::isfinite(*v) ? Json(*v) : Json(nullptr); }

Json Headline(const SessionMetrics& m) {
  return {{"auroc", Num(m.auroc)},
          {"tpr_at_1fpr", Num(m.tpr_at_1fpr)},
          {"fpr_at_block", Num(m.fpr_at_block)},
          {"fdt_mean", Num(m.fdt_mean)},
          {"detected_fraction", Num(m.detected_fraction)},
          {"leakage", Num(m.leakage)}};
}

Json Counts(const SessionMetrics& m) {
  return {{"attack_sessions", m.attack_sessions},
          {"benign_sessions", m.benign_sessions},
          {"detected", m.detected},
          {"benign_blocked", m.benign_blocked},
          {"fpr_at_block_ci95", {m.fpr_ci.lo, m.fpr_ci.hi}},
          {"fdt_median", Num(m.fdt_median)},
          {"leaked_memories", m.leaked},
          {"leaked_memories_undefended", m.leaked_undefended}};
}

std::string Cell(const std::optional<double>& v, int precision = 3) {
  if (!v || !std::isfinite(*v)) return "-";
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(precision);
  s << *v;
  return s.str();
}

void Row(std::ostringstream& out, const std::string& name, const SessionMetrics& m) {
  out << "| " << name << " | " << m.attack_sessions << " / " << m.benign_sessions << " | " << Cell(m.auroc)
      << " | " << Cell(m.tpr_at_1fpr) << " | " << Cell(m.fpr_at_block);
  if (m.fpr_at_block) out << " [" << Cell(m.fpr_ci.lo) << ", " << Cell(m.fpr_ci.hi) << "]";
  out << " | " << Cell(m.fdt_mean, 2) << " | " << Cell(m.detected_fraction) << " | " << Cell(m.leakage);
  if (m.leakage) out << " (" << m.leaked << " / " << m.leaked_undefended << ")";
  out << " |\n";
}

}  // namespace

SessionEvalSummary SummarizeSessions(std::span<const SessionOutcome> outcomes) {
  OutcomeRefs attacks, benign;
  std::map<std::string, std::pair<OutcomeRefs, OutcomeRefs>> styles;  // style -> (attacks, benign)
  for (const SessionOutcome& o : outcomes) {
    const bool attack = o.label == SessionLabel::kAttack;
    (attack ? attacks : benign).push_back(&o);
    auto& [a, b] = styles[o.style];
    (attack ? a : b).push_back(&o);
  }
  SessionEvalSummary summary;
  summary.overall = Metrics(attacks, benign, true, true);
  for (const auto& [style, sides] : styles) {
    const bool own_pos = !sides.first.empty(), own_neg = !sides.second.empty();
    summary.by_style[style] =
        Metrics(own_pos ? sides.first : attacks, own_neg ? sides.second : benign, own_pos, own_neg);
  }
  return summary;
}

Json ToJson(const SessionEvalSummary& summary, const DefendedStore& defended,
            std::span<const SessionOutcome> outcomes, const SessionEvalConfig& config) {
  Json by_style = Json::object(), style_counts = Json::object();
  for (const auto& [style, m] : summary.by_style) {
    by_style[style] = Headline(m);
    style_counts[style] = Counts(m);
  }
  Json sessions = Json::array();
  for (const SessionOutcome& o : outcomes) {
    sessions.push_back({{"session", o.session},
                        {"label", ToString(o.label)},
                        {"style", o.style},
                        {"queries", o.queries},
                        {"score", std::isfinite(o.score) ? Json(o.score) : Json(nullptr)},
                        {"detected_at", o.detected_at},
                        {"leaked", o.leaked},
                        {"leaked_undefended", o.leaked_undefended}});
  }
  const SessionEvalFit& f = defended.fit;
  Json detail = {{"overall", Counts(summary.overall)},
                 {"by_style", style_counts},
                 {"fit",
                  {{"memories", f.memories},
                   {"quarantined", f.quarantined},
                   {"attack_queries", f.attack_queries},
                   {"generated_attack_logs", f.generated_attacks},
                   {"benign_queries", f.benign_queries},
                   {"pots", f.pots},
                   {"seconds", f.seconds},
                   {"metrics", f.metrics}}},
                 {"config",
                  {{"k", config.k},
                   {"k_obs", config.k_obs},
                   {"estimator", honeypot::ToString(config.estimator)},
                   {"alpha", config.sprt.alpha},
                   {"beta", config.sprt.beta},
                   {"lower_boundary", honeypot::ToString(config.sprt.lower_boundary)},
                   {"ratio", config.fit.ratio},
                   {"seed", config.fit.seed},
                   {"intent_evidence", config.intent_evidence},
                   {"score", "max over the session of the SPRT statistic after each query"}}},
                 {"sessions", sessions}};
  return {{"overall", Headline(summary.overall)}, {"by_style", by_style}, {"detail", detail}};
}

std::string ToMarkdown(const SessionEvalSummary& summary, const DefendedStore& defended,
                       const SessionEvalConfig& config) {
  std::ostringstream out;
  const SessionEvalFit& f = defended.fit;
  out << "fit: " << f.memories << " memories (" << f.quarantined << " quarantined), " << f.pots
      << " pots from " << f.attack_queries << (f.generated_attacks ? " generated" : " logged")
      << " attack and " << f.benign_queries << " benign queries; estimator "
      << honeypot::ToString(config.estimator) << (config.intent_evidence ? " + intent grammar" : "") << ", k "
      << config.k << ", k_obs " << config.k_obs << "\n\n"
      << "| sessions | attack / benign | AUROC | TPR@1%FPR | FPR at block [95 % CI] | mean FDT | detected | "
         "leakage (defended / undefended) |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  Row(out, "all", summary.overall);
  for (const auto& [style, m] : summary.by_style) Row(out, "style " + style, m);
  return out.str();
}

}  // namespace bulwark::eval
