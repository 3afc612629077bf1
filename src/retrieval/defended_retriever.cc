// The defended read path (see defended_retriever.h).
#include "retrieval/defended_retriever.h"

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <chrono>

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
  const int k_low = request.search.k;
  if (k_low < 1 || k_low > kMaxK)
    return absl::InvalidArgumentError(absl::StrCat("k must be between 1 and ", kMaxK));
  const int k_high = request.k_high == 0 ? std::min(kMaxK, 2 * k_low) : request.k_high;
  if (k_high < k_low || k_high > kMaxK) {
    return absl::InvalidArgumentError(absl::StrCat("k_high must be between k and ", kMaxK));
  }
  if (request.smoothing) {
    if (auto s = ValidateSmoothingOptions(*request.smoothing); !s.ok()) return s;
  }
  if (request.responder == ResponderKind::kLlm && llm_ == nullptr) {
    return absl::FailedPreconditionError(
        "the llm responder needs an LLM: set BULWARK_LLM_URL and BULWARK_LLM_MODEL (or pass --llm)");
  }

  const honeypot::SessionKey caller{request.name_space, request.principal, request.session};
  if (guard_ != nullptr && !request.principal.empty()) {
    if (auto s = guard_->CheckAllowed(caller); !s.ok()) return s;  // before any retrieval work
  }

  // The gate of the namespace and the mode to apply.
  std::shared_ptr<const StoredGate> gate;
  if (gates_ != nullptr) {
    auto found = gates_->Get(request.name_space);
    if (!found.ok()) return found.status();
    gate = *std::move(found);
  }
  const GateMode policy = gate ? gate->mode : GateMode::kOff;
  const GateMode mode = request.gate_mode.value_or(policy);
  if (Strictness(mode) < Strictness(policy) && !request.may_weaken_gate) {
    return absl::PermissionDeniedError(
        absl::StrCat("gate mode \"", ToAbsl(ToString(mode)), "\" is weaker than the policy \"",
                     ToAbsl(ToString(policy)), "\" of this namespace; that needs the admin role"));
  }
  const Embedder& embedder = store_->embedder();
  if (gate && (gate->model->dimension() != embedder.dimension() ||
               gate->embedder != embedder.Fingerprint().ToString())) {
    return absl::FailedPreconditionError("the query gate was fitted for another embedder; fit it again");
  }

  DefendedSearchResult result;
  StageClock clock;
  auto embedding = embedder.Embed(request.query);
  if (!embedding.ok()) return embedding.status();
  result.stages.embed = clock.Lap();
  QueryGate query_gate(gate ? gate->model : nullptr, &embedder);
  auto verdict = query_gate.Evaluate(request.query, *embedding, mode);
  if (!verdict.ok()) return verdict.status();
  result.gate = *std::move(verdict);
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
  options.query_embedding = stripped ? nullptr : &*embedding;
  options.record_query = !result.gate.flagged;  // the history learns only from unflagged queries
  // The honeypot observation comes from the search's own scan (the query as sent: after a strip
  // the search ranks the cleaned query, so the guard then observes the original one itself).
  const bool observe =
      guard_ != nullptr && !request.principal.empty() && guard_->ShouldObserve(request.name_space);
  SearchObservation observation;
  if (observe && !stripped) {
    observation.k_obs = guard_->KObs(request.name_space);
    options.observation = &observation;
  }
  auto found = store_->Search(request.name_space, result.retrieved_query, options);
  if (!found.ok()) return found.status();
  const double store_search = clock.Lap();
  result.stages.verify = std::min(found->verify_seconds, store_search);
  result.stages.index = store_search - result.stages.verify;
  std::vector<SearchHit> pool;  // honeypots never reach a caller or a responder
  pool.reserve(found->hits.size());
  for (SearchHit& hit : found->hits) {
    if (hit.entry.kind != Kind::kHoneypot) pool.push_back(std::move(hit));
  }
  result.search.rejected_candidates = found->rejected_candidates;
  const auto returned = static_cast<ptrdiff_t>(std::min<size_t>(pool.size(), result.k));
  if (smoothing) {  // the smoother reads the whole pool below
    result.search.hits.assign(pool.begin(), pool.begin() + returned);
  } else {
    result.search.hits.assign(std::make_move_iterator(pool.begin()),
                              std::make_move_iterator(pool.begin() + returned));
  }

  if (observe) {
    // The observation never changes what this search returns; a failure is logged, not raised.
    // Over the ranking the namespace's searches use: the fused one for hybrid retrieval.
    absl::StatusOr<honeypot::MonitorVerdict> v;
    if (observation.observed) {
      v = guard_->Record(caller, observation.rows, request.query);
    } else {
      auto retrieval = store_->impl().retrieval->Get(request.name_space);
      const bool hybrid = retrieval.ok() && *retrieval == Retrieval::kHybrid;
      v = guard_->Observe(caller, *embedding, hybrid ? std::string_view(request.query) : std::string_view(),
                          request.query);
    }
    if (!v.ok()) {
      spdlog::warn("honeypot monitor: {}", ToStd(v.status().message()));
    } else {
      result.honeypot = *v;
    }
    result.stages.observe = clock.Lap();
  }

  if (smoothing) {
    ExtractiveResponder extractive;
    std::unique_ptr<Responder> llm_responder;
    if (request.responder == ResponderKind::kLlm) llm_responder = std::make_unique<LlmResponder>(llm_);
    const Responder* responder = llm_responder ? llm_responder.get() : &extractive;
    EmbeddingEquivalence by_embedding(&embedder);
    LlmEquivalence by_llm(llm_);
    const EquivalenceJudge* judge =
        llm_ != nullptr ? static_cast<const EquivalenceJudge*>(&by_llm) : &by_embedding;
    SeededCsprng rng(request.seed ? *request.seed : SeededCsprng::NewSeed(env_));
    const size_t m = std::min<size_t>(pool.size(), smoothing->m);
    auto answer =
        Smoother(responder, judge)
            .Answer(result.retrieved_query, std::span<const SearchHit>(pool.data(), m), *smoothing, &rng);
    if (!answer.ok()) return answer.status();
    result.smoothed = *std::move(answer);
    result.stages.smooth = clock.Lap();
  }

  return result;
}

}  // namespace bulwark
