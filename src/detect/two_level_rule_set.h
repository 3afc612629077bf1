// A set of RE2 rules matched in two levels (issue #12 point 10), for rules with sentence-long
// gaps such as the injection grammar's (data/validation_rules.tsv). Level one is one RE2::Set of
// gap-free atoms (rule_atoms.h), at most the two shortest of each alternative that English
// function words do not match. No atom spans a gap, so the set's lazily built DFA meets fewer new
// states on text the process has not seen (a state per combination of partly matched rules was
// the cost of the rules whole in one set). Level two runs a rule's own RE2 only when the level-one
// atoms of one of its alternatives all occurred (a necessary condition), and not at all when a
// gap-free alternative matched whole (a sufficient one). The result is exactly the set of rules
// RE2 finds in the text one by one (two_level_rule_set_test.cc checks it).
//
// Matching is const and thread-safe (RE2 and RE2::Set are); the per-rule RE2s are compiled when
// the rule is added.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/status/status.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

class TwoLevelRuleSet {
 public:
  struct Candidate {
    uint32_t rule = 0;
    bool exact = false;  // a gap-free alternative matched: the rule matches
  };
  using Candidates = absl::InlinedVector<Candidate, 8>;

  explicit TwoLevelRuleSet(const RE2::Options& options);
  ~TwoLevelRuleSet();

  // Adds `pattern` as rule size(). InvalidArgument with RE2's message if the pattern does not
  // compile (nothing is added then).
  [[nodiscard]] absl::Status Add(std::string_view pattern);
  // Compiles the atom set; call once after the last Add. ResourceExhausted if RE2 cannot.
  [[nodiscard]] absl::Status Compile();

  // Into `out` (cleared first), ascending: every rule for which the level-one atoms of some
  // alternative all occur in `text`. Rules that match are among them. Returns false if the atom
  // set's DFA ran out of memory on this text: then `out` holds every rule, none exact, so Verify
  // decides each by its own RE2 (which falls back to its NFA on a large input, still linear).
  bool FindCandidates(std::string_view text, Candidates* out) const;
  // Whether candidate `c` matches `text` (its own RE2 unless c.exact).
  bool Verify(const Candidate& c, std::string_view text) const;
  // The rules matching `text`, ascending, into `out` (cleared first): FindCandidates then Verify.
  void Match(std::string_view text, std::vector<uint32_t>* out) const;
  // The rules matching `text`, each rule's own RE2 in turn: the straightforward evaluation that
  // Match must equal (two_level_rule_set_test.cc).
  void MatchOneByOne(std::string_view text, std::vector<uint32_t>* out) const;

  // Rule `i` compiled whole.
  const RE2& rule(uint32_t i) const { return *rules_[i]; }
  size_t size() const { return rules_.size(); }
  // The distinct atoms of level one, in the order first added.
  const std::vector<std::string>& atoms() const { return atom_patterns_; }

 private:
  struct Alternative {
    uint32_t rule = 0;
    uint32_t begin = 0, end = 0;  // its distinct atoms: alternative_atoms_[begin, end)
    bool exact = false;
  };

  RE2::Options options_;
  std::unique_ptr<RE2::Set> atom_set_;                   // level one
  absl::flat_hash_map<std::string, int> atom_strength_;  // while adding: atom -> its AtomStrength
  std::vector<std::string> atom_patterns_;
  std::vector<std::unique_ptr<RE2>> rules_;  // each rule whole
  std::vector<Alternative> alternatives_;    // in rule order
  std::vector<uint32_t> alternative_atoms_;
  std::vector<std::vector<uint32_t>> triggered_;  // atom -> the alternatives it triggers
};

}  // namespace bulwark
