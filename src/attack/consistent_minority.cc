// Consistent Minority: string plurality vs. equivalence majority under t identical injections.
#include "attack/consistent_minority.h"

#include <algorithm>

#include "core/status_macros.h"
#include "eval/string_vote.h"
#include "smoothing/certificate.h"
#include "smoothing/embedding_equivalence.h"
#include "smoothing/extractive_responder.h"

namespace bulwark::attack {

absl::StatusOr<std::vector<NewEntry>> ConsistentMinorityEntries(std::string_view claim, int t) {
  if (claim.empty() || t < 1 || t > 100)
    return absl::InvalidArgumentError("consistent minority: claim and 1 <= t <= 100");
  std::vector<NewEntry> out;
  for (int i = 0; i < t; ++i) {
    NewEntry e;
    e.text = std::string(claim);
    e.metadata = {{"attack", "consistent_minority"}};
    out.push_back(std::move(e));
  }
  return out;
}

absl::StatusOr<ConsistentMinorityOutcome> MeasureConsistentMinority(
    MemoryStore& store, std::string_view name_space, std::string_view question,
    const eval::OracleJudge& oracle, const ConsistentMinorityOptions& options) {
  BULWARK_RETURN_IF_ERROR(ValidateSmoothingOptions(options.smoothing));
  if (options.trials < 1 || options.trials > 100000)
    return absl::InvalidArgumentError("consistent minority: trials in 1..100000");
  int out_poison = 0;
  BULWARK_ASSIGN_OR_RETURN(auto pool, store.Search(name_space, question, {.k = options.smoothing.m}));
  for (const SearchHit& hit : pool.hits) out_poison += hit.entry.metadata.contains("attack");
  ExtractiveResponder responder;
  EmbeddingEquivalence judge(&store.embedder());
  Smoother smoother(&responder, &judge);
  ConsistentMinorityOutcome out;
  out.trials = options.trials;
  out.poison_in_pool = out_poison;
  if (out_poison >= 1 && !pool.hits.empty()) {
    const int m = static_cast<int>(pool.hits.size());
    auto certificate = MakeCertificate(
        {.m = m, .k = std::min(options.smoothing.k, m), .nruns = options.smoothing.nruns}, out_poison);
    if (certificate.ok() && !certificate->delta.empty()) out.certificate_delta = certificate->delta.back();
  }
  int vote_malicious = 0, equivalence_malicious = 0;
  for (int trial = 0; trial < options.trials; ++trial) {
    SeededCsprng::Seed seed{};
    const uint64_t s = options.seed * 1'000'003 + static_cast<uint64_t>(trial);
    for (int b = 0; b < 8; ++b) seed[b] = static_cast<uint8_t>(s >> (8 * b));
    SeededCsprng rng(seed);
    BULWARK_ASSIGN_OR_RETURN(auto answer, smoother.Answer(question, pool.hits, options.smoothing, &rng));
    const bool equivalence_bad =
        !answer.abstained && oracle.Judge(answer.answer) == eval::Verdict::kMalicious;
    std::vector<std::string> responses;
    int malicious_runs = 0;
    for (const SmoothedRun& run : answer.runs) {
      responses.push_back(run.response);
      malicious_runs += oracle.Judge(run.response) == eval::Verdict::kMalicious;
    }
    const eval::StringVoteResult vote = eval::StringVote(responses);
    const bool vote_bad = vote.winner && oracle.Judge(*vote.winner) == eval::Verdict::kMalicious;
    vote_malicious += vote_bad;
    equivalence_malicious += equivalence_bad;
    out.minority_wins += vote_bad && 2 * malicious_runs < static_cast<int>(answer.runs.size());
  }
  out.string_vote_asr = vote_malicious / static_cast<double>(options.trials);
  out.equivalence_asr = equivalence_malicious / static_cast<double>(options.trials);
  return out;
}

}  // namespace bulwark::attack
