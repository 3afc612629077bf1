// Rule-based validation (MemSAD paper Sec. 5: "rule-based pattern matching"), rewritten as an
// injection grammar (issue #14, point 1). The rules live in a data file (data/validation_rules.tsv,
// compiled in as the default) and are grouped into the categories: instruction_override,
// role_authority_claim, mode_switch, addressing_model, secrecy_directive, credential_disclosure,
// exfiltration_url, exfiltration_email, exfiltration_person_place, tool_action_directive and
// hidden_text. Patterns are built from small named fragments (`@define` macros, expanded when the
// file loads) so that a category reads as a grammar ("an override verb, then a prior-instruction
// object") instead of a phrase list.
//
// Matching is over normalised text (text_normalizer.h: case, confusables, invisible characters,
// spacing and leetspeak) for `norm` rules and over the raw bytes for `raw` rules (exact tokens such
// as secret formats, HTML/CSS hiding). The normaliser's own findings (zero-width characters, bidi
// controls, tag characters, mixed-script words) are reported as built-in hidden_text rules. All
// matching is RE2 (linear in the text); each view is one pass of a two-level rule set
// (two_level_rule_set.h: the rules' gap-free atoms in one RE2::Set, then a rule's own RE2 only
// where all atoms of one of its alternatives occurred), whose DFA stays small on unseen text.
#pragma once

#include <absl/container/inlined_vector.h>
#include <absl/status/statusor.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "detect/text_normalizer.h"
#include "detect/two_level_rule_set.h"

namespace bulwark {

enum class RuleView {
  kNormalized,  // matched against NormalizedText::folded and ::deobfuscated
  kRaw,         // matched against the text as written
  kSignal,      // built in: a finding of the normaliser (hidden_text)
};

struct ValidationRule {
  std::string category;
  std::string name;
  std::string pattern;  // after macro expansion; empty for kSignal rules
  RuleView view = RuleView::kNormalized;
  // Counts only where a match is not negated in its clause ("never send the owner's card details
  // by email" is a policy, not an injection): view "affirmed" in the file.
  bool affirmed = false;
};

class ValidationRules {
 public:
  // Parses the TSV format of data/validation_rules.tsv. Lines:
  //   @define<TAB>NAME<TAB>fragment           a macro; NAME is [A-Z][A-Z0-9_]*
  //   category<TAB>name<TAB>pattern           a rule over normalised text
  //   category<TAB>name<TAB>raw<TAB>pattern   a rule over the raw text ("norm" is the default)
  //   category<TAB>name<TAB>affirmed<TAB>pattern  over normalised text, counted only where a match
  //                                           has no negation (never, not, n't, no one, nobody)
  //                                           earlier in its clause
  // '#' comments and blank lines are ignored. `{NAME}` in a fragment or pattern is replaced by the
  // macro's (earlier defined) fragment in a non-capturing group. InvalidArgument naming the line for
  // a malformed line, an unknown or duplicate macro, a duplicate rule name, an expansion over
  // kMaxPatternBytes, or a pattern RE2 rejects; also if there is no rule at all.
  static absl::StatusOr<std::unique_ptr<ValidationRules>> Parse(std::string_view tsv);
  // The rules compiled into the binary (data/validation_rules.tsv at build time).
  static absl::StatusOr<std::unique_ptr<ValidationRules>> Default();
  // The same rules, parsed and compiled once per process and shared (matching is const and
  // thread-safe): every write gate of the process uses one rule set, so its DFA caches are warmed by
  // all of them and held once, and opening a store does not recompile the grammar (~80 ms).
  // Default()'s error, every time, if the compiled-in rules do not parse.
  static absl::StatusOr<std::shared_ptr<const ValidationRules>> SharedDefault();
  // Reads and parses a rules file. NotFound if it cannot be read; Parse's errors prefixed by path.
  static absl::StatusOr<std::unique_ptr<ValidationRules>> Load(const std::string& path);

  static constexpr size_t kMaxPatternBytes = 16 * 1024;

  ~ValidationRules();

  // The rules that match `text`, in rules() order.
  std::vector<const ValidationRule*> Match(std::string_view text) const;
  // The indices in rules() of the rules that match, ascending, into `out` (cleared first).
  void Match(std::string_view text, absl::InlinedVector<uint32_t, 4>* out) const;
  // As above, over a text already normalised with NormalizeText (`raw` is the text as written).
  void Match(std::string_view raw, const NormalizedText& normalized,
             absl::InlinedVector<uint32_t, 4>* out) const;
  // The file's rules, then the built-in kSignal rules.
  const std::vector<ValidationRule>& rules() const { return rules_; }

 private:
  ValidationRules();
  absl::Status AddRule(ValidationRule rule, int line_number);
  absl::Status Compile();
  void AddSignalRules();
  // Adds the indices (in rules()) of `set`'s rules matching `text` to `hits`.
  void MatchSet(const TwoLevelRuleSet& set, const std::vector<uint32_t>& ids, std::string_view text,
                std::vector<uint32_t>* hits) const;
  // Whether `re` (rule `id`'s pattern) has a match in `text` that is not negated in its clause.
  static bool HasAffirmedMatch(const RE2& re, std::string_view text);

  std::vector<ValidationRule> rules_;
  std::unique_ptr<TwoLevelRuleSet> norm_set_, raw_set_;
  std::vector<uint32_t> norm_ids_, raw_ids_;  // set index -> rules() index
  uint32_t first_signal_ = 0;
};

}  // namespace bulwark
