// The fit driver of `bulwark honeypots fit` (issue #13 point 1; MemPot Sec. 4.1-4.2, App. C):
// memories (id, text, embedding) + attack-log query texts + benign query texts -> honeypots
// (text, vector, metrics), deterministic for a seed:
//   1. P = max(1, round(ratio x covered memories)) pots; covered = all memories, or with `stack`
//      only those not covered by earlier runs (MemPot-Stack, App. C.1: earlier pots are kept and a
//      separately optimised set is appended for the new memories).
//   2. Balanced k-means over the covered memories' embeddings -> P initial pots (one per cluster).
//   3. The pot optimizer (Eq. 9-11) on the attack and benign query embeddings (plus, with
//      coverage_probes, memory embeddings as extra positives) against ALL memories.
//   4. tau_priv (the median nearest-neighbour memory cosine), then each vector is realised as text
//      (LexicalRealizer, or any PotRealizer such as the LLM route) and gated (PotTextGate); pots
//      with no passing text are dropped and reported.
//   5. Metrics of the pots as they will be indexed (the realised text's embedding by default, or
//      the optimised vector): training AUROC of Eq. 9, pots per query, the calibrated count LLR
//      table (research/mempot.md 2.5) from the same training queries, inversion gaps, privacy
//      maxima. Wall-clock timings are reported apart from the deterministic metrics.
// Nothing is stored here: the caller (the store's admin path) persists pots and metrics.
#pragma once

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "honeypot/lexical_realizer.h"
#include "honeypot/llr_estimator.h"
#include "honeypot/pot_optimizer.h"

namespace bulwark::honeypot {

struct FitMemory {
  std::string id;
  std::string text;
  std::vector<float> embedding;  // the store's vector for `text` (unit norm)
};

// Turns a pot vector into gated text. LexicalRealizer is the default; the LLM route is another.
class PotRealizer {
 public:
  virtual ~PotRealizer() = default;
  [[nodiscard]] virtual absl::StatusOr<RealizedPot> Realize(std::span<const float> target,
                                                            const PotTextGate& gate,
                                                            std::string_view safety_content) const = 0;
};

// Adapts LexicalRealizer to PotRealizer (non-owning).
class LexicalPotRealizer final : public PotRealizer {
 public:
  explicit LexicalPotRealizer(const LexicalRealizer& r) : r_(r) {}
  absl::StatusOr<RealizedPot> Realize(std::span<const float> target, const PotTextGate& gate,
                                      std::string_view safety_content) const override {
    return r_.Realize(target, gate, safety_content);
  }

 private:
  const LexicalRealizer& r_;
};

enum class IndexVector { kRealized, kOptimized };

struct FitOptions {
  double ratio = 0.03;  // pots per covered memory, (0, 0.5]; the paper uses 0.02-0.04
  uint64_t seed = 0;
  bool stack = false;  // App. C.1: pots only for memories not covered before
  int kmeans_iterations = 20;
  PotOptimizerOptions optimizer;  // its seed is replaced by `seed`
  double privacy_quantile = 0.5;  // tau_priv quantile of nearest-neighbour memory cosines
  int privacy_sample = 1000;      // memories sampled for tau_priv
  int copy_ngram = 4;             // PotTextGate's no-copy n
  std::string safety_content;     // S of Eq. 14 (e.g. the namespace's public description)
  IndexVector index_vector = IndexVector::kRealized;
  double calibration_cap = 0;  // CountCalibration::Fit's cap (0: none)
  // CountCalibration::Fit's unseen_weight rho: the calibrated alternative is (1 - rho) x what the
  // fit's attack queries drew + rho x what benign queries drew, so that an attack family the
  // pots were not fitted on is not argued benign by the pots' silence. [0, 1); 0: the plain table.
  double unseen_weight = 0.5;
  // Coverage probes: this many memory embeddings, drawn uniformly without replacement (seeded),
  // join the attack queries as InfoNCE positives for training (not for the metrics or the
  // calibration). They stand for what every extractor does whatever its phrasing -- it asks for
  // what is stored, all over the memory space -- so training places pots on the parts of that
  // space benign queries do not reach, not only where the seen attack families' queries go
  // (MemPot's attacker proxy with random-walk augmentation, App. A, reduced to the walk's
  // near-uniform stationary end). 0: off. 0 .. 10^6 (more than the memories: all of them).
  int coverage_probes = 0;
};

// What earlier runs left (for stack mode).
struct PreviousFit {
  std::vector<std::string> covered_memory_ids;  // memories the earlier runs covered
  std::vector<std::vector<float>> pot_vectors;  // their pots as indexed
  int last_batch = 0;
};

struct FittedPot {
  std::string text;
  std::vector<float> vector;     // what the index should hold (see IndexVector)
  std::vector<float> optimized;  // the trained vector u_j
  int cluster = 0;               // its k-means cluster
  int batch = 1;                 // 1 for the first run, +1 per stacked run
  double target_cos = 0;         // cos(E(text), u_j); inversion gap = 1 - target_cos
  double privacy_max = 0;        // max over memories of cos(vector, e_j)
  double readable = 0;
};

struct FitResult {
  std::vector<FittedPot> pots;                  // this run's pots (stack: only the new ones)
  std::vector<std::string> covered_memory_ids;  // the memories this run covered
  CountCalibration calibration;                 // over all pots (previous + new) as indexed
  nlohmann::json metrics;                       // deterministic for the seed (see doc/honeypots.md)
  nlohmann::json timings;                       // seconds per stage (not deterministic)
};

// Errors: InvalidArgument for no memories, no attack or no benign queries, an embedding of the
// wrong dimension or not finite, a duplicate memory id, more than 10^6 memories or 10^6 queries,
// ratio outside (0, 0.5]; FailedPrecondition in stack mode when no memory is new, or when no pot
// passes the gates; the embedder's, optimizer's and realiser's errors.
[[nodiscard]] absl::StatusOr<FitResult> FitHoneypots(const std::vector<FitMemory>& memories,
                                                     const std::vector<std::string>& attack_queries,
                                                     const std::vector<std::string>& benign_queries,
                                                     const Embedder& embedder, const PotRealizer& realizer,
                                                     const FitOptions& options,
                                                     const PreviousFit& previous = {});

}  // namespace bulwark::honeypot
