// The defended read path (see defended_retriever.h).
#include "retrieval/defended_retriever.h"

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "core/status_macros.h"
#include "core/strings.h"
#include "smoothing/embedding_equivalence.h"
#include "smoothing/extractive_responder.h"
#include "smoothing/llm_equivalence.h"
#include "smoothing/llm_responder.h"
#include "store/memory_store_impl.h"

namespace bulwark {
namespace {

// Seconds since the previous Lap (or construction), for SearchStageTimes.
class StageClock {
 public:
  double Lap() {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return seconds;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

constexpr int kMaxK = 1000;

// Checks k, k_high, the smoothing options and the responder; returns k_high.
absl::StatusOr<int> CheckRequest(const DefendedSearchRequest& request, const ChatClient* llm) {
  const int k_low = request.search.k;
  if (k_low < 1 || k_low > kMaxK)
    return absl::InvalidArgumentError(absl::StrCat("k must be between 1 and ", kMaxK));
  const int k_high = request.k_high == 0 ? std::min(kMaxK, 2 * k_low) : request.k_high;
  if (k_high < k_low || k_high > kMaxK) {
    return absl::InvalidArgumentError(absl::StrCat("k_high must be between k and ", kMaxK));
  }
  if (request.smoothing) BULWARK_RETURN_IF_ERROR(ValidateSmoothingOptions(*request.smoothing));
  if (request.responder == ResponderKind::kLlm && llm == nullptr) {
    return absl::FailedPreconditionError(
        "the llm responder needs an LLM: set BULWARK_LLM_URL and BULWARK_LLM_MODEL (or pass --llm)");
  }
  return k_high;
}

// The namespace's gate (null without one) and the mode to apply.
struct GatePlan {
  std::shared_ptr<const StoredGate> gate;
  GateMode mode = GateMode::kOff;
};

// PermissionDenied for a mode weaker than the policy without may_weaken_gate; FailedPrecondition
// for a gate fitted under another embedder; the registry's errors.
absl::StatusOr<GatePlan> PlanGate(GateRegistry* gates, const DefendedSearchRequest& request,
                                  const Embedder& embedder) {
  GatePlan plan;
  if (gates != nullptr) {
    BULWARK_ASSIGN_OR_RETURN(plan.gate, gates->Get(request.name_space));
  }
  const GateMode policy = plan.gate ? plan.gate->mode : GateMode::kOff;
  plan.mode = request.gate_mode.value_or(policy);
  if (Strictness(plan.mode) < Strictness(policy) && !request.may_weaken_gate) {
    return absl::PermissionDeniedError(
        absl::StrCat("gate mode \"", ToAbsl(ToString(plan.mode)), "\" is weaker than the policy \"",
                     ToAbsl(ToString(policy)), "\" of this namespace; that needs the admin role"));
  }
  if (plan.gate && (plan.gate->model->dimension() != embedder.dimension() ||
                    plan.gate->embedder != embedder.Fingerprint().ToString())) {
    return absl::FailedPreconditionError("the query gate was fitted for another embedder; fit it again");
  }
  return plan;
}

// Smoothing (SMSR Component 2) over the first m hits of `pool`: the LLM responder when asked for,
// else the extractive one; the LLM judge when there is an LLM, else the embedding one.
absl::StatusOr<SmoothedAnswer> SmoothAnswer(const DefendedSearchRequest& request, const std::string& query,
                                            const std::vector<SearchHit>& pool,
                                            const SmoothingOptions& smoothing, const Embedder& embedder,
                                            const ChatClient* llm, Env* env) {
  ExtractiveResponder extractive;
  std::unique_ptr<Responder> llm_responder;
  if (request.responder == ResponderKind::kLlm) llm_responder = std::make_unique<LlmResponder>(llm);
  const Responder* responder = llm_responder ? llm_responder.get() : &extractive;
  EmbeddingEquivalence by_embedding(&embedder);
  LlmEquivalence by_llm(llm);
  const EquivalenceJudge* judge =
      llm != nullptr ? static_cast<const EquivalenceJudge*>(&by_llm) : &by_embedding;
  SeededCsprng rng(request.seed ? *request.seed : SeededCsprng::NewSeed(env));
  const size_t m = std::min<size_t>(pool.size(), smoothing.m);
  return Smoother(responder, judge)
      .Answer(query, std::span<const SearchHit>(pool.data(), m), smoothing, &rng);
}

// The honeypot monitor's verdict on a search by `caller`: over the search's own scan when it
// observed one, else over the ranking the namespace's searches use (the fused one for hybrid
// retrieval, which needs the query text). HoneypotGuard::Record's and Observe's errors.
absl::StatusOr<honeypot::MonitorVerdict> ObserveCaller(HoneypotGuard& guard,
                                                       const HoneypotGuard::SearchPlan& plan,
                                                       MemoryStore& store, const honeypot::SessionKey& caller,
                                                       const std::string& query,
                                                       const std::vector<float>& embedding,
                                                       const SearchObservation& observation) {
  // Over the ranking the namespace's searches use (the fused one for hybrid retrieval); the query
  // text is also the monitor's intent evidence.
  if (observation.observed) return guard.Record(plan, caller, observation.rows, query);
  auto retrieval = store.impl().retrieval->Get(caller.ns);
  const bool hybrid = retrieval.ok() && *retrieval == Retrieval::kHybrid;
  return guard.Observe(caller, embedding, hybrid ? std::string_view(query) : std::string_view(), query);
}

}  // namespace

nlohmann::json DefenseDetail(const DefendedSearchResult& result) {
  nlohmann::json detail = {{"gate", ToJson(result.gate)}, {"k", result.k}};
  if (result.smoothed) {
    const SmoothedAnswer& s = *result.smoothed;
    detail["smoothing"] = {{"certificate", ToJson(s.certificate)},
                           {"nruns", s.runs.size()},
                           {"responder", s.responder},
                           {"judge", s.judge},
                           {"seed", s.seed_hex},
                           {"abstained", s.abstained},
                           {"majority_runs", s.majority_runs}};
  }
  return detail;
}

DefendedRetriever::DefendedRetriever(MemoryStore* store, GateRegistry* gates, const ChatClient* llm, Env* env)
    : store_(store), gates_(gates), llm_(llm), env_(env ? env : Env::Default()) {}

absl::StatusOr<DefendedSearchResult> DefendedRetriever::Search(const DefendedSearchRequest& request) {
  BULWARK_ASSIGN_OR_RETURN(const int k_high, CheckRequest(request, llm_));
  const int k_low = request.search.k;
  const honeypot::SessionKey caller{request.name_space, request.principal, request.session};
  HoneypotGuard::SearchPlan guard_plan;  // the guard's settings for this search, read once
  if (guard_ != nullptr && !request.principal.empty()) {
    BULWARK_ASSIGN_OR_RETURN(guard_plan, guard_->Begin(caller));  // a refusal comes before any retrieval work
  }
  const Embedder& embedder = store_->embedder();
  BULWARK_ASSIGN_OR_RETURN(const GatePlan plan, PlanGate(gates_, request, embedder));

  DefendedSearchResult result;
  StageClock clock;
  BULWARK_ASSIGN_OR_RETURN(const std::vector<float> embedding, embedder.Embed(request.query));
  result.stages.embed = clock.Lap();
  QueryGate query_gate(plan.gate ? plan.gate->model : nullptr, &embedder);
  BULWARK_ASSIGN_OR_RETURN(result.gate, query_gate.Evaluate(request.query, embedding, plan.mode));
  result.stages.gate = clock.Lap();
  if (result.rejected()) return result;

  const bool stripped = result.gate.decision == GateDecision::kStrip;
  const bool escalated = result.gate.decision == GateDecision::kEscalate;
  result.retrieved_query = stripped ? result.gate.cleaned_query : request.query;
  result.k = escalated ? k_high : k_low;
  std::optional<SmoothingOptions> smoothing = request.smoothing;
  if (escalated && !smoothing) smoothing = SmoothingOptions{};

  SearchOptions options = request.search;
  options.k = std::max(result.k, smoothing ? smoothing->m : 0);
  options.query_embedding = stripped ? nullptr : &embedding;
  options.record_query = !result.gate.flagged;  // the history learns only from unflagged queries
  // The honeypot observation comes from the search's own scan (the query as sent: after a strip
  // the search ranks the cleaned query, so the guard then observes the original one itself).
  const bool observe = guard_plan.observe();
  SearchObservation observation{.k_obs = guard_plan.k_obs(), .cosines = guard_plan.cosines()};
  if (observe && !stripped) options.observation = &observation;
  BULWARK_ASSIGN_OR_RETURN(SearchResult found,
                           store_->Search(request.name_space, result.retrieved_query, options));
  const double store_search = clock.Lap();
  result.stages.verify = std::min(found.verify_seconds, store_search);
  result.stages.index = store_search - result.stages.verify;
  std::vector<SearchHit> pool;  // honeypots never reach a caller or a responder
  pool.reserve(found.hits.size());
  for (SearchHit& hit : found.hits) {
    if (hit.entry.kind != Kind::kHoneypot) pool.push_back(std::move(hit));
  }
  result.search.rejected_candidates = found.rejected_candidates;
  const auto returned = static_cast<ptrdiff_t>(std::min<size_t>(pool.size(), result.k));
  if (smoothing) {  // the smoother reads the whole pool below
    result.search.hits.assign(pool.begin(), pool.begin() + returned);
  } else {
    result.search.hits.assign(std::make_move_iterator(pool.begin()),
                              std::make_move_iterator(pool.begin() + returned));
  }

  if (observe) {
    // The observation never changes what this search returns, except that in block mode the
    // search that decides H1 is refused; a failure is logged, not raised.
    absl::StatusOr<honeypot::MonitorVerdict> v =
        ObserveCaller(*guard_, guard_plan, *store_, caller, request.query, embedding, observation);
    if (!v.ok()) {
      spdlog::warn("honeypot monitor: {}", ToStd(v.status().message()));
    } else {
      BULWARK_RETURN_IF_ERROR(guard_->CheckDecided(caller, *v));
      result.honeypot = *v;
    }
    result.stages.observe = clock.Lap();
  }

  if (smoothing) {
    BULWARK_ASSIGN_OR_RETURN(result.smoothed, SmoothAnswer(request, result.retrieved_query, pool, *smoothing,
                                                           embedder, llm_, env_));
    result.stages.smooth = clock.Lap();
  }

  return result;
}

}  // namespace bulwark
