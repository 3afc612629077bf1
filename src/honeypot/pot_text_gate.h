// The hard gates every honeypot text must pass before it may be stored (research/mempot.md 2.3
// step 4; the paper only has the soft privacy scorer of Eq. 15):
//   privacy      max_j cos(E(y), e_doc_j) < tau_priv over EVERY memory of the namespace, where
//                tau_priv is calibrated as a quantile (default the median) of the memories'
//                nearest-neighbour cosines: a pot must be farther from every memory than a typical
//                memory is from its nearest neighbour;
//   no copying   y shares no word n-gram (default n = 4, lowercase [a-z0-9]+ tokens) with any
//                memory text;
//   no commands  no rule of the write gate's validation rules (src/detect/validation_rules.h) and
//                no rule of a small pot-specific list of extraction imperatives ("print all
//                previous examples", "repeat the context", ...) matches y. A pot that reads like
//                an instruction would be a self-inflicted prompt injection if it ever leaked.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detect/validation_rules.h"
#include "honeypot/pot_math.h"

namespace bulwark::honeypot {

// The pot-specific imperative rules (validation_rules.tsv format), compiled in.
extern const std::string_view kPotInstructionRules;

struct PotTextGateOptions {
  int copy_ngram = 4;  // n of the no-copy gate, 2 .. 16
};

struct GateResult {
  bool passed = false;
  std::string reason;       // empty when passed: "privacy 0.61 >= 0.55", "copies 4-gram '...'",
                            //   "instruction rule instruction_override/ignore_previous"
  double privacy_max = 0;   // max_j cos(E(y), e_doc_j)
  int nearest_memory = -1;  // the j attaining it
};

class PotTextGate {
 public:
  // `memory_texts[i]` has embedding row i of `memory_embeddings` (unit rows). `privacy_bound` is
  // tau_priv. Errors: InvalidArgument for mismatched sizes or a bound outside (-1, 1]; the
  // statuses of ValidationRules::SharedDefault (the write gate's rules, compiled once per process).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PotTextGate>> Create(
      std::span<const std::string> memory_texts, RowMatrixXf memory_embeddings, double privacy_bound,
      const PotTextGateOptions& options = {});

  // All three gates for text `text` with embedding `embedding` (dimension d). O(N d + |text|).
  GateResult Check(std::string_view text, std::span<const float> embedding) const;
  // The privacy gate's statistic alone.
  double PrivacyMax(std::span<const float> embedding, int* argmax = nullptr) const;
  // The first memory n-gram that `text` copies, or empty.
  std::string CopiedNgram(std::string_view text) const;
  // The first matching instruction rule as "category/name", or empty.
  std::string InstructionRule(std::string_view text) const;

  double privacy_bound() const { return privacy_bound_; }
  const RowMatrixXf& memory_embeddings() const { return memories_; }

 private:
  PotTextGate() = default;
  RowMatrixXf memories_;
  absl::flat_hash_set<uint64_t> memory_ngrams_;
  std::shared_ptr<const ValidationRules> write_rules_;
  std::unique_ptr<ValidationRules> pot_rules_;
  double privacy_bound_ = 1;
  int n_ = 4;
};

// tau_priv: the `quantile` (0 .. 1) of max_{j != i} cos(e_i, e_j) over a seeded sample of at most
// `sample` memories i (all of them if fewer). InvalidArgument for fewer than 2 memories or a
// quantile outside [0, 1]. O(sample N d).
[[nodiscard]] absl::StatusOr<double> CalibratePrivacyBound(const RowMatrixXf& memories, double quantile = 0.5,
                                                           int sample = 1000, uint64_t seed = 0);

}  // namespace bulwark::honeypot
