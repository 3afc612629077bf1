// The session experiment of `bulwark-lab eval sessions` (see session_eval.h).
#include "eval/experiments/session_eval.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/cord.h>
#include <absl/strings/str_cat.h>
#include <absl/types/optional.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>

#include "attack/extraction/attack_log.h"
#include "attack/extraction/extraction_target.h"
#include "attack/extraction/run_extraction.h"
#include "core/status_macros.h"
#include "embed/wordnet_canonicalizer.h"
#include "honeypot/bigram_lm.h"
#include "honeypot/intent_cap.h"
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

// The intent table's cap: config.intent_cap, or derived from the SPRT's log A and the count
// table's bound on a pot-less round (honeypot/intent_cap.h).
absl::StatusOr<double> IntentCap(const SessionEvalConfig& config) {
  if (config.intent_cap > 0) return config.intent_cap;
  BULWARK_ASSIGN_OR_RETURN(honeypot::Sprt sprt, honeypot::Sprt::Create(config.sprt));
  absl::StatusOr<double> cap =
      honeypot::TwoRequestIntentCap(sprt.upper(), config.unseen_weight, config.calibration_cap);
  if (!cap.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(cap.status().message(), "; give the intent cap (--intent-cap) explicitly"));
  }
  return cap;
}

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
  if (config.coverage_benign_sessions < 0 || config.coverage_benign_sessions > 1000) {
    return absl::InvalidArgumentError("coverage benign sessions must be in 0 .. 1000");
  }
  if (config.benign_queries.empty() && config.benign_query_files.empty()) {
    return absl::InvalidArgumentError("the fit needs benign queries or a benign query file");
  }
  return absl::OkStatus();
}

using QuerySessions = std::vector<std::vector<std::string>>;

// Runs built-in generators (attack names of extraction::ExtractionAttackNames) against the
// store and returns the queries of their log, one list per session, in order.
absl::StatusOr<QuerySessions> GeneratedSessions(MemoryStore& store, const SessionEvalConfig& config,
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
  QuerySessions out;
  for (const extraction::AttackSession& s : sessions) {
    out.emplace_back();
    for (const extraction::AttackStep& step : s.steps) out.back().push_back(step.query);
  }
  return out;
}

std::vector<std::string> Flatten(const QuerySessions& sessions) {
  std::vector<std::string> out;
  for (const std::vector<std::string>& s : sessions) out.insert(out.end(), s.begin(), s.end());
  return out;
}

// Consecutive runs of `length` queries of a flat list (given logs and queries carry no sessions).
QuerySessions Chunks(const std::vector<std::string>& queries, size_t length) {
  QuerySessions out;
  for (size_t i = 0; i < queries.size(); i += length)
    out.emplace_back(queries.begin() + static_cast<std::ptrdiff_t>(i),
                     queries.begin() + static_cast<std::ptrdiff_t>(std::min(queries.size(), i + length)));
  return out;
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
// Per query: the pots in its observation and its best memory cosine (the lowest row's cosine when
// the observation holds only pots, as HoneypotGuard::Record reads it).
struct ObservedCounts {
  std::vector<int> pots;
  std::vector<float> best_memory;
};

// Whether the namespace is ranked by hybrid fusion (the read path then observes the fused ranking).
bool HybridRanked(MemoryStore& store, std::string_view name_space) {
  absl::StatusOr<Retrieval> retrieval = store.impl().retrieval->Get(name_space);
  return retrieval.ok() && *retrieval == Retrieval::kHybrid;
}

// The observation of query `q`: the first k_obs rows of the vector ranking, or of the fused one
// when `hybrid` (as the read path observes a hybrid-ranked namespace).
absl::StatusOr<std::vector<EntryStore::ObservedRow>> ObserveQuery(MemoryStore& store,
                                                                  const SessionEvalConfig& config,
                                                                  const std::string& q, bool hybrid) {
  BULWARK_ASSIGN_OR_RETURN(std::vector<float> embedding, store.embedder().Embed(q));
  return store.impl().entries->Observe(config.name_space, embedding, config.k_obs,
                                       hybrid ? std::string_view(q) : "");
}

// With `as_read_path`, each query is observed as the read path observes a search of the namespace
// (the fused ranking when its retrieval is hybrid: HoneypotGuard's rows, DefendedRetriever's
// ObserveCaller); otherwise over the vector ranking (as `honeypots fit` calibrates its table).
absl::StatusOr<ObservedCounts> PotCounts(MemoryStore& store, const SessionEvalConfig& config,
                                         const std::vector<std::string>& queries, bool as_read_path = false) {
  const bool hybrid = as_read_path && HybridRanked(store, config.name_space);
  ObservedCounts out;
  for (const std::string& q : queries) {
    BULWARK_ASSIGN_OR_RETURN(auto rows, ObserveQuery(store, config, q, hybrid));
    int pots = 0;
    float best = -std::numeric_limits<float>::infinity(), lowest = std::numeric_limits<float>::infinity();
    for (const auto& r : rows) {
      pots += r.is_pot ? 1 : 0;
      lowest = std::min(lowest, r.score);
      if (!r.is_pot) best = std::max(best, r.score);
    }
    if (!std::isfinite(best)) best = std::isfinite(lowest) ? lowest : 0.0f;
    out.pots.push_back(pots);
    out.best_memory.push_back(best);
  }
  return out;
}

struct TrainingQueries {
  std::vector<std::string> attack, benign;
  // benign[0 .. user_like) are what users ask (given and simulated queries); the memory-derived
  // questions after them are near-copies of stored text, not a user's distribution.
  size_t user_like = 0;
  // The same attack and user-like queries as sessions, in order (generated sessions as the
  // generators ran them; given queries in runs of 64): what the coverage evidence is fitted on.
  QuerySessions attack_sessions, benign_sessions;
};

// The fit's positives (given, or generated) and negatives (given + simulated + memory-derived).
absl::StatusOr<TrainingQueries> Training(MemoryStore& store, const SessionEvalConfig& config,
                                         const std::vector<honeypot::FitMemory>& active, SessionEvalFit* fit,
                                         const std::function<void(std::string_view)>& stage) {
  TrainingQueries t{config.attack_queries, config.benign_queries};
  fit->generated_attacks = t.attack.empty();
  if (t.attack.empty()) {
    stage("generating attack logs");
    BULWARK_ASSIGN_OR_RETURN(t.attack_sessions, GeneratedSessions(store, config, config.generated_attacks));
    t.attack = Flatten(t.attack_sessions);
  } else {
    t.attack_sessions = Chunks(t.attack, 64);
  }
  t.benign_sessions = Chunks(t.benign, 64);
  if (!config.benign_query_files.empty()) {
    stage("generating benign sessions");
    BULWARK_ASSIGN_OR_RETURN(QuerySessions simulated, GeneratedSessions(store, config, {"benign"}));
    for (std::vector<std::string>& q : simulated) {
      t.benign.insert(t.benign.end(), q.begin(), q.end());
      t.benign_sessions.push_back(std::move(q));
    }
  }
  t.user_like = t.benign.size();
  if (config.memory_queries) {
    const std::vector<std::string> near = MemoryQueries(active);
    t.benign.insert(t.benign.end(), near.begin(), near.end());
  }
  fit->attack_queries = t.attack.size();
  fit->benign_queries = t.benign.size();
  return t;
}

// The relevance evidence's calibration (relevance_evidence.h) on the calibration half's queries
// that users ask (the given and simulated benign queries, not the memory-derived ones, whose best
// memory is nearly themselves) and its attack queries, each observed as the read path observes a
// search: tau is then the low tail of user queries as the monitor sees them. (Before 2026-11-24
// late, the pool included the memory-derived half and the vector ranking's rows, which put tau far
// above the simulator's low tail: 37 % of benign rounds fell below it instead of 10 %.)
absl::StatusOr<honeypot::RelevanceCalibration> CalibrateRelevance(MemoryStore& store,
                                                                  const SessionEvalConfig& config,
                                                                  const TrainingQueries& all) {
  // The calibration half as Split makes it: odd positions, or everything without the split.
  const size_t first = config.heldout_calibration ? 1 : 0, step = config.heldout_calibration ? 2 : 1;
  std::vector<std::string> benign, attack;
  for (size_t i = first; i < all.user_like; i += step) benign.push_back(all.benign[i]);
  for (size_t i = first; i < all.attack.size(); i += step) attack.push_back(all.attack[i]);
  // A tiny user-given pool can leave the calibration half without a user query: then every user
  // query, and without any (none given or simulated) the memory-derived ones as before.
  if (benign.empty())
    benign.assign(all.benign.begin(), all.benign.begin() + static_cast<std::ptrdiff_t>(all.user_like));
  if (benign.empty()) benign = all.benign;
  BULWARK_ASSIGN_OR_RETURN(ObservedCounts b, PotCounts(store, config, benign, /*as_read_path=*/true));
  BULWARK_ASSIGN_OR_RETURN(ObservedCounts a, PotCounts(store, config, attack, /*as_read_path=*/true));
  return honeypot::RelevanceCalibration::Fit(b.best_memory, a.best_memory, config.relevance_quantile,
                                             config.relevance_cap);
}

// The coverage evidence's table (coverage_evidence.h): every training session replayed in order
// through the namespace's observation as the read path makes it (pots written), a fresh window per
// session (the eval gives each session its own principal), novel memory rows counted per round.
absl::StatusOr<honeypot::CoverageCalibration> CalibrateCoverage(MemoryStore& store,
                                                                const SessionEvalConfig& config,
                                                                const TrainingQueries& all) {
  const bool hybrid = HybridRanked(store, config.name_space);
  auto novelty = [&](const QuerySessions& sessions) -> absl::StatusOr<std::vector<int>> {
    std::vector<int> out;
    for (const std::vector<std::string>& session : sessions) {
      std::vector<std::vector<int64_t>> rounds;
      for (const std::string& q : session) {
        BULWARK_ASSIGN_OR_RETURN(auto rows, ObserveQuery(store, config, q, hybrid));
        rounds.emplace_back();
        for (const auto& r : rows)
          if (!r.is_pot) rounds.back().push_back(r.row_id);
      }
      const std::vector<int> n = honeypot::SessionNovelty(rounds, config.coverage_window);
      out.insert(out.end(), n.begin(), n.end());
    }
    return out;
  };
  BULWARK_ASSIGN_OR_RETURN(std::vector<int> benign, novelty(all.benign_sessions));
  if (config.coverage_benign_sessions > 0 && !config.benign_query_files.empty()) {
    // A larger benign calibration than the fit's few simulator sessions, from a seed of its own.
    SessionEvalConfig more = config;
    more.generated_sessions = config.coverage_benign_sessions;
    more.generator_seed = config.generator_seed + 2000003;
    BULWARK_ASSIGN_OR_RETURN(QuerySessions simulated, GeneratedSessions(store, more, {"benign"}));
    BULWARK_ASSIGN_OR_RETURN(std::vector<int> extra, novelty(simulated));
    benign.insert(benign.end(), extra.begin(), extra.end());
  }
  BULWARK_ASSIGN_OR_RETURN(std::vector<int> attack, novelty(all.attack_sessions));
  return honeypot::CoverageCalibration::Fit(benign, attack, config.k_obs, config.coverage_cap,
                                            config.unseen_weight, config.coverage_floor,
                                            config.coverage_monotone);
}

}  // namespace

absl::StatusOr<DefendedStore> BuildDefendedStore(MemoryStore& store, std::span<const NewEntry> memories,
                                                 const SessionEvalConfig& config,
                                                 const std::function<void(std::string_view)>& progress) {
  BULWARK_RETURN_IF_ERROR(ValidateConfig(config));
  BULWARK_RETURN_IF_ERROR(IntentCap(config).status());  // before anything is written
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
  BULWARK_ASSIGN_OR_RETURN(ObservedCounts benign, PotCounts(store, config, calibration_set.benign));
  BULWARK_ASSIGN_OR_RETURN(ObservedCounts attack, PotCounts(store, config, calibration_set.attack));
  BULWARK_ASSIGN_OR_RETURN(out.calibration,
                           honeypot::CountCalibration::Fit(benign.pots, attack.pots, config.k_obs,
                                                           config.calibration_cap, config.unseen_weight));
  out.fit.metrics["eval_calibration"] = out.calibration.ToJson();
  BULWARK_ASSIGN_OR_RETURN(out.relevance, CalibrateRelevance(store, config, all));
  out.fit.metrics["eval_relevance_calibration"] = out.relevance.ToJson();
  if (config.coverage_evidence) {  // only then: it observes every training session once more
    BULWARK_ASSIGN_OR_RETURN(out.coverage, CalibrateCoverage(store, config, all));
    out.fit.metrics["eval_coverage_calibration"] = out.coverage.ToJson();
  }
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const honeypot::IntentGrammar> grammar,
                           honeypot::IntentGrammar::Default());
  BULWARK_ASSIGN_OR_RETURN(const double intent_cap, IntentCap(config));
  BULWARK_ASSIGN_OR_RETURN(
      honeypot::IntentCalibration intent,
      honeypot::IntentCalibration::Fit(*grammar, calibration_set.benign, calibration_set.attack, intent_cap));
  out.fit.metrics["eval_intent_calibration"] = intent.ToJson();
  out.fit.metrics["eval_intent_cap"] = intent_cap;
  BULWARK_ASSIGN_OR_RETURN(out.intent, honeypot::IntentEvidence::Create(grammar, std::move(intent)));
  out.fit.seconds = SecondsSince(start);
  return out;
}

namespace {

// The SPRT statistic a session_blocked refusal carries (HoneypotGuard::kRefusalPayloadUrl); +inf
// if it carries none.
double RefusedStatistic(const absl::Status& refused) {
  const absl::optional<absl::Cord> payload = refused.GetPayload(HoneypotGuard::kRefusalPayloadUrl);
  if (!payload) return std::numeric_limits<double>::infinity();
  const Json detail = Json::parse(std::string(*payload), nullptr, /*allow_exceptions=*/false);
  if (!detail.is_object() || !detail.contains("statistic") || !detail["statistic"].is_number())
    return std::numeric_limits<double>::infinity();
  return detail["statistic"].get<double>();
}

// Folds the monitor's verdict on query t (0-based) into the session's score, detection and trace.
void ScoreRound(const honeypot::MonitorVerdict& v, size_t t, const SessionEvalConfig& config,
                SessionOutcome* out, bool* scored) {
  // After an H0 decision the monitor reports S reset to 0; the round's value was <= log B.
  const double lower = std::log(config.sprt.beta / (1 - config.sprt.alpha));
  const double st = std::max(v.session == honeypot::SprtDecision::kH0 ? lower : v.session_statistic,
                             v.principal == honeypot::SprtDecision::kH0 ? lower : v.principal_statistic);
  // Ties of the maximum (capped LLRs make many) go to the session that reached it first.
  const double tie_broken = st - kTieBreakPerQuery * static_cast<double>(t + 1);
  out->score = *scored ? std::max(out->score, tie_broken) : tie_broken;
  *scored = true;
  if (v.blocked && out->detected_at == 0) out->detected_at = t + 1;
  if (config.trace) {
    out->rounds.push_back({.pots = v.pots,
                           .llr = v.llr,
                           .text_llr = v.text_llr,
                           .session_statistic = v.session_statistic,
                           .h0 = v.session == honeypot::SprtDecision::kH0,
                           .blocked = v.blocked});
  }
}

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
    if (!result.ok()) {            // blocked: what the store would have returned without the defense
      if (out.detected_at == 0) {  // the deciding search itself was refused (CheckDecided)
        out.detected_at = t + 1;
        const double st = RefusedStatistic(result.status()) - kTieBreakPerQuery * static_cast<double>(t + 1);
        out.score = scored ? std::max(out.score, st) : st;
        scored = true;
      }
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
    if (result->honeypot) ScoreRound(*result->honeypot, t, config, &out, &scored);
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
  options.refuse_deciding_search = config.refuse_deciding_search;
  if (config.relevance_evidence) options.relevance = defended.relevance;
  if (config.coverage_evidence) {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<honeypot::CoverageWindows> windows,
                             honeypot::CoverageWindows::Create({.window = config.coverage_window}));
    options.coverage = std::make_shared<honeypot::CoverageEvidence>(defended.coverage, std::move(windows));
  }
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

}  // namespace bulwark::eval
