// Smoother: smoothed retrieval with a certificate (SMSR Component 2; DESIGN 4.6). From the top m
// verified entries (the pool, over-fetched by the caller with MemoryStore::Search(k = m)) it draws
// nruns uniform k-subsets with a seeded CSPRNG, asks the Responder for one answer per subset,
// groups the answers by an EquivalenceJudge and returns the group with a strict majority of runs,
// or abstains with "no consistent answer". Every answer carries the certificate delta(m, k, t,
// nruns) for t = 1..3 with the m actually retrieved, the parameters, the seed, and the entry ids
// behind each run.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/seeded_csprng.h"
#include "smoothing/answer_aggregator.h"
#include "smoothing/certificate.h"
#include "smoothing/equivalence_judge.h"
#include "smoothing/responder.h"
#include "store/memory_store.h"

namespace bulwark {

struct SmoothingOptions {
  int m = 20;     // candidates to over-fetch; k .. kMaxPool
  int k = 5;      // entries per run; 1 .. m
  int nruns = 5;  // runs; 1 .. kMaxSmoothingRuns
};
inline constexpr int kMaxPool = 1000;  // MemoryStore::Search's largest k
inline constexpr int kMaxSmoothingRuns = 101;

// InvalidArgument unless the ranges above hold.
[[nodiscard]] absl::Status ValidateSmoothingOptions(const SmoothingOptions& options);

struct SmoothedRun {
  std::vector<std::string> entry_ids;  // the run's subset, in pool order
  std::string response;
  int group = -1;  // index into SmoothedAnswer::groups
};

struct SmoothedAnswer {
  bool abstained = true;
  std::string answer;  // the majority group's representative; empty when abstained
  std::string reason;  // why it abstained: "no consistent answer", "no memories"
  int majority_runs = 0;
  std::vector<SmoothedRun> runs;
  std::vector<AnswerGroup> groups;
  Certificate certificate;  // m = pool size, k = min(k, m); empty delta when the pool is empty
  std::string responder;
  std::string judge;
  std::string seed_hex;
};

// {"answer", "abstained", "reason"?, "majority_runs", "nruns", "runs": [{"entry_ids", "response",
//  "group"}], "groups": [{"answer", "runs"}], "certificate": {...}, "responder", "judge", "seed"}
nlohmann::json ToJson(const SmoothedAnswer& answer);

class Smoother {
 public:
  // Both must outlive the smoother.
  Smoother(const Responder* responder, const EquivalenceJudge* judge)
      : responder_(responder), judge_(judge) {}

  // Answers `question` from `pool` (most similar first). A pool smaller than k is used whole in
  // every run (the certificate then says delta = 1: smoothing cannot help). Errors: bad options
  // (InvalidArgument), and any error of the responder or the judge.
  [[nodiscard]] absl::StatusOr<SmoothedAnswer> Answer(std::string_view question,
                                                      std::span<const SearchHit> pool,
                                                      const SmoothingOptions& options,
                                                      SeededCsprng* rng) const;

 private:
  const Responder* responder_;
  const EquivalenceJudge* judge_;
};

}  // namespace bulwark
