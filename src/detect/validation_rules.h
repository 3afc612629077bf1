// Rule-based validation (MemSAD paper Sec. 5: "rule-based pattern matching"): instruction
// overrides, role markers, tool and credential directives, exfiltration URLs and hidden-text
// tricks, kept in a data file (data/validation_rules.tsv, compiled in as the default) and
// matched in time linear in the text with one RE2::Set.
#pragma once

#include <absl/container/inlined_vector.h>
#include <absl/status/statusor.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

struct ValidationRule {
  std::string category;
  std::string name;
  std::string pattern;
};

class ValidationRules {
 public:
  // Parses the TSV format of data/validation_rules.tsv: "category<TAB>name<TAB>pattern" lines,
  // '#' comments and blank lines ignored. InvalidArgument naming the line for a malformed line,
  // a duplicate name or a pattern RE2 rejects; also if there is no rule at all.
  static absl::StatusOr<std::unique_ptr<ValidationRules>> Parse(std::string_view tsv);
  // The rules compiled into the binary (data/validation_rules.tsv at build time).
  static absl::StatusOr<std::unique_ptr<ValidationRules>> Default();
  // Reads and parses a rules file.
  static absl::StatusOr<std::unique_ptr<ValidationRules>> Load(const std::string& path);

  ~ValidationRules();

  // The rules that match `text`, in file order.
  std::vector<const ValidationRule*> Match(std::string_view text) const;
  // The indices in rules() of the rules that match, ascending, into `out` (cleared first). No
  // allocation when nothing matches (one DFA pass that stops at the first match).
  void Match(std::string_view text, absl::InlinedVector<uint32_t, 4>* out) const;
  const std::vector<ValidationRule>& rules() const { return rules_; }

 private:
  ValidationRules();
  std::vector<ValidationRule> rules_;
  std::unique_ptr<RE2::Set> set_;
};

}  // namespace bulwark
