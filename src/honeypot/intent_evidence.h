// Query-text evidence for the honeypot monitor (issue #13 points 3 and 7): an extraction-intent
// grammar over the normalised query, whose matches become a per-query log-likelihood ratio that is
// ADDED to the pot estimator's LLR in the same Wald SPRT (Observation::text_llr):
//
//   log r_t = l_pots(observation_t) + l_text(query_t)
//   l_text(q) = max_{c matched by q} l(c)           (0 when no category matches)
//   l(c)      = clamp(log(p1 / p0(c)), 0, cap)
//   p0(c)     = (b_c + 1/2) / (N0 + 1)              benign queries matching category c (Jeffreys)
//   p1        = (a + 1/2) / (N1 + 1)                attack queries matching ANY category
//
// Why this form (doc/honeypots.md, "Query-text evidence"):
//   - p0 is per category because what benign users say is what can be measured; p1 is pooled over
//     the categories because WHICH form of request an extractor uses is exactly what differs
//     between attack families, so a category no training family used still counts when a new
//     family uses it (pots learn a family's vocabulary; the grammar is written for the intent);
//   - the max over matched categories, not the sum, because one query matching several forms is
//     one request, and the categories are strongly correlated;
//   - no negative evidence (clamped at 0, and 0 without a match): leaving the words out costs an
//     attacker nothing, so their absence must not cancel the pots' evidence;
//   - a cap: one request alone never blocks; two do, and a pot hit with one does. Fit's default
//     (1.1, just above log A / 2 at alpha = beta = 0.1) ignores that every round also carries the
//     count table's entry for its pot count, negative for a family the pots do not know; callers
//     derive the cap that keeps the design with it (intent_cap.h: 1.79 at the defaults).
//
// The grammar is data/extraction_intent_rules.tsv (compiled in), parsed by ValidationRules (the
// write gate's RE2 + @define format, normalised text). Matching is a literal prefilter
// (intent_prefilter.h), then, for a query it cannot rule out, one RE2::Set pass per view.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detect/validation_rules.h"
#include "honeypot/intent_prefilter.h"

namespace bulwark::honeypot {

// data/extraction_intent_rules.tsv as compiled into the binary.
extern const std::string_view kDefaultExtractionIntentRules;

class IntentGrammar {
 public:
  static constexpr size_t kMaxCategories = 32;

  // Parses the rules (validation_rules.tsv format). ValidationRules::Parse's errors;
  // InvalidArgument for more than kMaxCategories categories.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<IntentGrammar>> Parse(std::string_view tsv);
  // The compiled-in grammar (parsed once per call).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<IntentGrammar>> Default();

  // The file's categories, in order of first appearance (the normaliser's built-in hidden_text
  // signals are not categories of this grammar).
  const std::vector<std::string>& categories() const { return categories_; }
  // Bit c set when a rule of categories()[c] matches `query`. A query with none of the literals
  // the rules need (intent_prefilter.h: most queries) is decided without the RE2::Set passes.
  uint32_t Match(std::string_view query) const;
  // The same for `query` as `principal` asked it in `name_space`. The masks of the last texts a
  // thread matched (up to kCachedTexts of at most kMaxCachedBytes, per thread) are kept, each
  // with the namespace and principal that asked: a text the same principal searches again, as
  // agents repeat queries, costs one hash and one comparison instead of the matching. Only the
  // asker's own earlier queries are ever found, so the time of a search tells a principal nothing
  // about what others asked (issue #13 point 2). `cached` (optional): whether the mask came from
  // the cache.
  uint32_t Match(std::string_view query, std::string_view name_space, std::string_view principal,
                 bool* cached = nullptr) const;
  static constexpr size_t kCachedTexts = 64;
  static constexpr size_t kMaxCachedBytes = 512;
  // "category/rule" of every matching rule (for explanations and tests).
  std::vector<std::string> MatchedRules(std::string_view query) const;

 private:
  IntentGrammar();
  const uint64_t id_;  // unique in the process: a cached mask is only ever this grammar's
  std::unique_ptr<ValidationRules> rules_;
  std::unique_ptr<IntentPrefilter> prefilter_;  // null: every query is matched in full
  std::vector<std::string> categories_;
  std::vector<int> rule_category_;  // rules() index -> category index, -1 for built-in signals
};

// The per-category LLR table l(c) above.
struct IntentCalibration {
  std::vector<std::string> categories;  // the grammar's categories, in its order
  std::vector<double> llr;              // l(c), each in [0, cap]
  std::vector<double> benign_rate;      // p0(c) (for the report)
  double attack_rate = 0;               // p1
  size_t benign_queries = 0, attack_queries = 0;

  // Fits the table from benign and attack query texts. InvalidArgument if either side is empty or
  // cap is not in (0, 20].
  [[nodiscard]] static absl::StatusOr<IntentCalibration> Fit(const IntentGrammar& grammar,
                                                             std::span<const std::string> benign,
                                                             std::span<const std::string> attack,
                                                             double cap = 1.1);
  // {"categories": [..], "llr": [..], "benign_rate": [..], "attack_rate", "benign_queries",
  // "attack_queries"}. FromJson: InvalidArgument unless the arrays have equal sizes of at most
  // kMaxCategories and every llr is finite and in [0, 20].
  nlohmann::json ToJson() const;
  [[nodiscard]] static absl::StatusOr<IntentCalibration> FromJson(const nlohmann::json& j);
};

// A grammar with its calibration: what the read path asks per query.
class IntentEvidence {
 public:
  // InvalidArgument if the calibration's categories are not the grammar's.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const IntentEvidence>> Create(
      std::shared_ptr<const IntentGrammar> grammar, IntentCalibration calibration);
  // l_text(query): the largest l(c) over the categories the query matches; 0 if none.
  double Llr(std::string_view query) const;
  // The same through the grammar's per-principal cache (IntentGrammar::Match with an asker): what
  // the read path calls.
  double Llr(std::string_view query, std::string_view name_space, std::string_view principal) const;
  const IntentCalibration& calibration() const { return calibration_; }
  const IntentGrammar& grammar() const { return *grammar_; }

 private:
  IntentEvidence(std::shared_ptr<const IntentGrammar> grammar, IntentCalibration calibration)
      : grammar_(std::move(grammar)), calibration_(std::move(calibration)) {}
  double LlrOf(uint32_t mask) const;
  std::shared_ptr<const IntentGrammar> grammar_;
  IntentCalibration calibration_;
};

}  // namespace bulwark::honeypot
