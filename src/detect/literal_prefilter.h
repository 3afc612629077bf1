// A literal prefilter for a set of RE2 rules (issue #12 point 10): for each rule, clauses of
// literal strings such that every match of the rule holds at least one literal of each clause, so
// a text without them is not searched by that rule at all. The literals of every rule are found
// in a text in one pass of a prebuilt Aho-Corasick automaton (literal_matcher.h), which costs the
// same on text the process has not seen as on text it has: no lazily built DFA states.
//
// Where the clauses come from: a rule is cut into alternatives of gap-free atoms (rule_atoms.h);
// every atom of an alternative occurs in any match of it. For each atom, RE2's FilteredRE2 gives
// an AND/OR tree of lower-cased literals that any lower-cased text it matches satisfies, and
// leaves evaluating the tree to the caller (a tree for all rules took 3-7 us per text through
// AllPotentials). The tree is monotone, so if a set T of its literals does not satisfy it,
// neither does any subset of T: a text matching the atom holds a literal outside T. Each clause
// is the complement of a maximal such T, grown by group testing (short literals into T first, so
// the clause keeps the long ones; up to three clauses, each from another part of the tree). A
// rule may match a text only if, for one of its alternatives, every clause of every atom has a
// literal in the text; a rule with an alternative without any clause may match any text.
//
// The condition is exact only for ASCII text (the automaton folds A-Z to a-z, and RE2's case-
// insensitive matching of ASCII text is that folding; Unicode folding, e.g. K for k, is not
// covered): callers must not use it on other text.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "detect/literal_matcher.h"

namespace bulwark {

class LiteralPrefilter {
 public:
  LiteralPrefilter();
  ~LiteralPrefilter();

  // Adds rule size() in `group` (rules are asked for by group; the literals of every group are
  // found in one pass). InvalidArgument if RE2 does not compile the pattern with `options`.
  [[nodiscard]] absl::Status Add(std::string_view pattern, const RE2::Options& options, int group);
  // Builds the automaton; call once after the last Add.
  void Compile();

  // The literals occurring in ASCII `text`, into `found` (cleared first).
  void FindLiterals(std::string_view text, std::vector<int>* found) const;
  // Into `rules` (cleared first), ascending: the rules of `group` that may match an ASCII text
  // holding exactly the literals `found` (every rule that does match is among them).
  void Potentials(const std::vector<int>& found, int group, std::vector<uint32_t>* rules) const;

  size_t size() const { return groups_.size(); }
  size_t literal_count() const { return literals_.size(); }

 private:
  struct Term {  // an alternative of a rule: it may match if every one of its clauses is hit
    uint32_t rule = 0;
    uint32_t begin = 0, end = 0;  // its distinct clauses: term_clauses_[begin, end)
  };
  std::vector<int> groups_;  // rule -> group
  std::vector<Term> terms_;
  std::vector<uint32_t> term_clauses_;
  std::vector<std::vector<uint32_t>> clause_literals_;  // clause -> its literals (while adding)
  std::vector<std::vector<uint32_t>> literal_clauses_;  // literal -> the clauses holding it
  // group -> clause -> the terms of the group's rules it triggers (their least likely clause)
  std::vector<std::vector<std::vector<uint32_t>>> triggers_;
  size_t clause_count_ = 0;
  std::vector<std::string> literals_;                                  // distinct, in the order first added
  std::vector<std::vector<uint32_t>> always_;                          // group -> its rules without a clause
  absl::flat_hash_map<std::string, uint32_t> literal_index_;           // while adding
  absl::flat_hash_map<std::vector<uint32_t>, uint32_t> clause_index_;  // while adding
  absl::flat_hash_map<std::string, std::vector<std::vector<std::string>>> atom_clauses_;  // while adding
  std::unique_ptr<LiteralMatcher> matcher_;
};

}  // namespace bulwark
