// Query-text evidence for the honeypot monitor (see intent_evidence.h).
#include "honeypot/intent_evidence.h"

#include <absl/container/inlined_vector.h>
#include <absl/hash/hash.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include "core/status_macros.h"
#include "honeypot/extraction_intent_rules_data.h"

namespace bulwark::honeypot {

const std::string_view kDefaultExtractionIntentRules = kExtractionIntentRulesTsv;

absl::StatusOr<std::unique_ptr<IntentGrammar>> IntentGrammar::Parse(std::string_view tsv) {
  std::unique_ptr<IntentGrammar> grammar(new IntentGrammar());
  BULWARK_ASSIGN_OR_RETURN(grammar->rules_, ValidationRules::Parse(tsv));
  for (const ValidationRule& rule : grammar->rules_->rules()) {
    if (rule.view == RuleView::kSignal) {
      grammar->rule_category_.push_back(-1);
      continue;
    }
    auto it = std::find(grammar->categories_.begin(), grammar->categories_.end(), rule.category);
    if (it == grammar->categories_.end()) {
      if (grammar->categories_.size() == kMaxCategories) {
        return absl::InvalidArgumentError(
            absl::StrCat("intent grammar: more than ", kMaxCategories, " categories"));
      }
      grammar->categories_.push_back(rule.category);
      it = grammar->categories_.end() - 1;
    }
    grammar->rule_category_.push_back(static_cast<int>(it - grammar->categories_.begin()));
  }
  std::vector<bool> counted;
  for (const int c : grammar->rule_category_) counted.push_back(c >= 0);
  grammar->prefilter_ = IntentPrefilter::Create(*grammar->rules_, counted);
  return grammar;
}

absl::StatusOr<std::unique_ptr<IntentGrammar>> IntentGrammar::Default() {
  return Parse(kDefaultExtractionIntentRules);
}

IntentGrammar::IntentGrammar()
    : id_([] {
        static std::atomic<uint64_t> next{1};
        return next.fetch_add(1);
      }()) {}

uint32_t IntentGrammar::Match(std::string_view query) const {
  // One normalisation: the prefilter and, for a query it cannot rule out, the rule sets read the
  // same views.
  uint32_t mask = 0;
  WithThreadNormalizedText(query, [&](const NormalizedText& normalized) {
    if (prefilter_ != nullptr && !prefilter_->MayMatch(normalized)) return;
    absl::InlinedVector<uint32_t, 4> hits;
    rules_->Match(query, normalized, &hits);
    for (uint32_t id : hits) {
      const int c = rule_category_[id];
      if (c >= 0) mask |= uint32_t{1} << c;
    }
  });
  return mask;
}

uint32_t IntentGrammar::Match(std::string_view query, std::string_view name_space, std::string_view principal,
                              bool* cached) const {
  if (cached != nullptr) *cached = false;
  if (query.size() > kMaxCachedBytes) return Match(query);
  struct Slot {
    uint64_t grammar = 0;  // 0: empty (grammar ids start at 1)
    size_t hash = 0;
    uint32_t mask = 0;
    std::string text, name_space, principal;
  };
  thread_local std::array<Slot, kCachedTexts> cache;
  const size_t hash = absl::HashOf(query, name_space, principal);
  Slot& slot = cache[hash % kCachedTexts];
  if (slot.grammar == id_ && slot.hash == hash && slot.text == query && slot.name_space == name_space &&
      slot.principal == principal) {
    if (cached != nullptr) *cached = true;
    return slot.mask;
  }
  const uint32_t mask = Match(query);
  slot.grammar = id_;
  slot.hash = hash;
  slot.mask = mask;
  slot.text.assign(query.data(), query.size());
  slot.name_space.assign(name_space.data(), name_space.size());
  slot.principal.assign(principal.data(), principal.size());
  return mask;
}

std::vector<std::string> IntentGrammar::MatchedRules(std::string_view query) const {
  absl::InlinedVector<uint32_t, 4> hits;
  rules_->Match(query, &hits);
  std::vector<std::string> out;
  for (uint32_t id : hits) {
    if (rule_category_[id] < 0) continue;
    const ValidationRule& r = rules_->rules()[id];
    out.push_back(absl::StrCat(r.category, "/", r.name));
  }
  return out;
}

absl::StatusOr<IntentCalibration> IntentCalibration::Fit(const IntentGrammar& grammar,
                                                         std::span<const std::string> benign,
                                                         std::span<const std::string> attack, double cap) {
  if (benign.empty() || attack.empty()) {
    return absl::InvalidArgumentError("intent calibration needs benign and attack queries");
  }
  if (!(cap > 0) || cap > 20) return absl::InvalidArgumentError("intent calibration: cap must be in (0, 20]");
  const size_t categories = grammar.categories().size();
  std::vector<size_t> benign_hits(categories, 0);
  for (const std::string& q : benign) {
    const uint32_t mask = grammar.Match(q);
    for (size_t c = 0; c < categories; ++c) benign_hits[c] += (mask >> c) & 1u;
  }
  size_t attack_hits = 0;
  for (const std::string& q : attack) attack_hits += grammar.Match(q) != 0 ? 1 : 0;
  IntentCalibration cal;
  cal.categories = grammar.categories();
  cal.benign_queries = benign.size();
  cal.attack_queries = attack.size();
  cal.attack_rate = (static_cast<double>(attack_hits) + 0.5) / (static_cast<double>(attack.size()) + 1);
  for (size_t c = 0; c < categories; ++c) {
    const double p0 = (static_cast<double>(benign_hits[c]) + 0.5) / (static_cast<double>(benign.size()) + 1);
    cal.benign_rate.push_back(p0);
    cal.llr.push_back(std::clamp(std::log(cal.attack_rate / p0), 0.0, cap));
  }
  return cal;
}

nlohmann::json IntentCalibration::ToJson() const {
  return {{"categories", categories},         {"llr", llr},
          {"benign_rate", benign_rate},       {"attack_rate", attack_rate},
          {"benign_queries", benign_queries}, {"attack_queries", attack_queries}};
}

absl::StatusOr<IntentCalibration> IntentCalibration::FromJson(const nlohmann::json& j) {
  const absl::Status bad = absl::InvalidArgumentError(
      "intent calibration: want {categories, llr, benign_rate} of equal sizes <= 32, llr in [0, 20]");
  if (!j.is_object()) return bad;
  for (const char* key : {"categories", "llr", "benign_rate"}) {
    if (!j.contains(key) || !j[key].is_array()) return bad;
  }
  const size_t n = j["categories"].size();
  if (n > IntentGrammar::kMaxCategories || j["llr"].size() != n || j["benign_rate"].size() != n) return bad;
  IntentCalibration cal;
  for (size_t i = 0; i < n; ++i) {
    const nlohmann::json &c = j["categories"][i], &l = j["llr"][i], &r = j["benign_rate"][i];
    if (!c.is_string() || !l.is_number() || !r.is_number()) return bad;
    const double llr = l.get<double>();
    if (!std::isfinite(llr) || llr < 0 || llr > 20) return bad;
    cal.categories.push_back(c.get<std::string>());
    cal.llr.push_back(llr);
    cal.benign_rate.push_back(r.get<double>());
  }
  if (j.contains("attack_rate") && j["attack_rate"].is_number())
    cal.attack_rate = j["attack_rate"].get<double>();
  if (j.contains("benign_queries") && j["benign_queries"].is_number_unsigned())
    cal.benign_queries = j["benign_queries"].get<size_t>();
  if (j.contains("attack_queries") && j["attack_queries"].is_number_unsigned())
    cal.attack_queries = j["attack_queries"].get<size_t>();
  return cal;
}

absl::StatusOr<std::shared_ptr<const IntentEvidence>> IntentEvidence::Create(
    std::shared_ptr<const IntentGrammar> grammar, IntentCalibration calibration) {
  if (grammar == nullptr) return absl::InvalidArgumentError("intent evidence: no grammar");
  if (calibration.categories != grammar->categories() ||
      calibration.llr.size() != calibration.categories.size()) {
    return absl::InvalidArgumentError("intent evidence: the calibration's categories are not the grammar's");
  }
  return std::shared_ptr<const IntentEvidence>(
      new IntentEvidence(std::move(grammar), std::move(calibration)));
}

double IntentEvidence::Llr(std::string_view query) const { return LlrOf(grammar_->Match(query)); }

double IntentEvidence::Llr(std::string_view query, std::string_view name_space,
                           std::string_view principal) const {
  return LlrOf(grammar_->Match(query, name_space, principal));
}

double IntentEvidence::LlrOf(uint32_t mask) const {
  double best = 0;
  for (size_t c = 0; c < calibration_.llr.size(); ++c) {
    if ((mask >> c) & 1u) best = std::max(best, calibration_.llr[c]);
  }
  return best;
}

}  // namespace bulwark::honeypot
