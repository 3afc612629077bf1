#include "detect/literal_prefilter.h"

#include <re2/filtered_re2.h>

#include <algorithm>
#include <cctype>

#include "detect/rule_atoms.h"

namespace bulwark {
namespace {

// A literal almost every text holds (a letter, a digit, a space): a clause with one is nearly
// always satisfied, so it is dropped when the term has another clause. That only weakens the
// condition, and saves finding the literal at nearly every byte and updating every term using it.
bool Common(const std::string& literal) {
  return literal.size() == 1 && (std::isalnum(static_cast<unsigned char>(literal[0])) ||
                                 std::isspace(static_cast<unsigned char>(literal[0])));
}

// The clauses of one gap-free atom (see the header): none if no literal is necessary.
std::vector<std::vector<std::string>> NecessaryClauses(std::string_view atom, const RE2::Options& options) {
  re2::FilteredRE2 filter(1);  // every literal counts, however short
  int id = 0;
  if (filter.Add(re2::StringPiece(atom.data(), atom.size()), options, &id) != RE2::NoError) return {};
  std::vector<std::string> atoms;
  filter.Compile(&atoms);
  std::vector<int> potentials, kept;
  auto satisfied = [&](const std::vector<int>& found) {
    filter.AllPotentials(found, &potentials);
    return !potentials.empty();
  };
  if (satisfied({})) return {};
  std::vector<int> by_length(atoms.size());
  for (size_t i = 0; i < by_length.size(); ++i) by_length[i] = static_cast<int>(i);
  std::stable_sort(by_length.begin(), by_length.end(), [&](int a, int b) {
    return atoms[static_cast<size_t>(a)].size() < atoms[static_cast<size_t>(b)].size();
  });
  std::vector<std::vector<std::string>> clauses;
  std::vector<bool> in_clause(atoms.size(), false);
  for (int round = 0; round < 3; ++round) {
    // Atoms of the clauses found so far first, then short before long: the next clause is the
    // part of the tree that the atoms put first do not satisfy.
    std::vector<int> order;
    for (int a : by_length) {
      if (in_clause[static_cast<size_t>(a)]) order.push_back(a);
    }
    for (int a : by_length) {
      if (!in_clause[static_cast<size_t>(a)]) order.push_back(a);
    }
    // Group testing: a run of atoms joins `kept` if the tree stays unsatisfied with it; else it
    // is halved, and a single atom that satisfies it is the clause's.
    kept.clear();
    std::vector<std::string> clause;
    auto test = [&](auto&& self, const int* begin, const int* end) -> void {
      const size_t before = kept.size();
      kept.insert(kept.end(), begin, end);
      if (!satisfied(kept)) return;
      kept.resize(before);
      if (end - begin == 1) {
        clause.push_back(atoms[static_cast<size_t>(*begin)]);
        in_clause[static_cast<size_t>(*begin)] = true;
        return;
      }
      const int* middle = begin + (end - begin) / 2;
      self(self, begin, middle);
      self(self, middle, end);
    };
    test(test, order.data(), order.data() + order.size());
    std::sort(clause.begin(), clause.end());
    if (std::find(clauses.begin(), clauses.end(), clause) != clauses.end()) break;
    clauses.push_back(std::move(clause));
  }
  return clauses;
}

}  // namespace

LiteralPrefilter::LiteralPrefilter() = default;
LiteralPrefilter::~LiteralPrefilter() = default;

absl::Status LiteralPrefilter::Add(std::string_view pattern, const RE2::Options& options, int group) {
  if (!RE2(re2::StringPiece(pattern.data(), pattern.size()), options).ok())
    return absl::InvalidArgumentError("the literal prefilter cannot compile the pattern");
  const auto rule = static_cast<uint32_t>(groups_.size());
  groups_.push_back(group);
  std::vector<std::vector<uint32_t>> terms;  // each alternative's clause ids
  bool always = false;
  for (const RuleAlternative& alternative : SplitAtGaps(pattern).alternatives) {
    // The alternative's term: every clause of every atom (each atom occurs in any match of it).
    std::vector<std::vector<std::string>> clauses, common;
    for (const std::string& atom : alternative.atoms) {
      auto [it, inserted] = atom_clauses_.try_emplace(atom);
      if (inserted) it->second = NecessaryClauses(atom, options);
      for (const auto& clause : it->second) {
        (std::any_of(clause.begin(), clause.end(), Common) ? common : clauses).push_back(clause);
      }
    }
    // Common clauses only where the term has no other (one, however weak, still splits it from
    // "any text").
    if (clauses.empty() && !common.empty()) clauses.push_back(common.front());
    if (clauses.empty()) {
      always = true;  // an alternative without a necessary literal: the rule may match any text
      break;
    }
    std::vector<uint32_t> ids;
    for (const std::vector<std::string>& clause : clauses) {
      std::vector<uint32_t> literal_ids;
      for (const std::string& literal : clause) {
        const auto [at, added] = literal_index_.try_emplace(literal, static_cast<uint32_t>(literals_.size()));
        if (added) {
          literals_.push_back(literal);
          literal_clauses_.emplace_back();
        }
        literal_ids.push_back(at->second);
      }
      std::sort(literal_ids.begin(), literal_ids.end());
      const auto [ct, new_clause] =
          clause_index_.try_emplace(literal_ids, static_cast<uint32_t>(clause_literals_.size()));
      if (new_clause) {
        for (uint32_t literal : literal_ids) literal_clauses_[literal].push_back(ct->second);
        clause_literals_.push_back(literal_ids);
      }
      if (std::find(ids.begin(), ids.end(), ct->second) == ids.end()) ids.push_back(ct->second);
    }
    terms.push_back(std::move(ids));
  }
  if (always) {
    if (always_.size() <= static_cast<size_t>(group)) always_.resize(static_cast<size_t>(group) + 1);
    always_[static_cast<size_t>(group)].push_back(rule);
    return absl::OkStatus();
  }
  for (const std::vector<uint32_t>& ids : terms) {
    const auto begin = static_cast<uint32_t>(term_clauses_.size());
    term_clauses_.insert(term_clauses_.end(), ids.begin(), ids.end());
    terms_.push_back({rule, begin, static_cast<uint32_t>(term_clauses_.size())});
  }
  return absl::OkStatus();
}

void LiteralPrefilter::Compile() {
  // Each term is looked at only when its trigger was hit: the clause of it least likely to be,
  // taken to be the one whose shortest literal is longest (short literals are common ones).
  auto shortest = [&](uint32_t clause) {
    size_t n = std::string::npos;
    for (uint32_t literal : clause_literals_[clause]) n = std::min(n, literals_[literal].size());
    return n;
  };
  int groups = 0;
  for (int group : groups_) groups = std::max(groups, group + 1);
  triggers_.assign(static_cast<size_t>(groups), std::vector<std::vector<uint32_t>>(clause_literals_.size()));
  for (uint32_t t = 0; t < terms_.size(); ++t) {
    const Term& term = terms_[t];
    uint32_t trigger = term_clauses_[term.begin];
    for (uint32_t i = term.begin; i < term.end; ++i) {
      if (shortest(term_clauses_[i]) > shortest(trigger)) trigger = term_clauses_[i];
    }
    triggers_[static_cast<size_t>(groups_[term.rule])][trigger].push_back(t);
  }
  clause_count_ = clause_literals_.size();
  literal_index_.clear();
  clause_index_.clear();
  atom_clauses_.clear();
  clause_literals_.clear();
  matcher_ = std::make_unique<LiteralMatcher>(literals_);
}

void LiteralPrefilter::FindLiterals(std::string_view text, std::vector<int>* found) const {
  thread_local std::vector<uint8_t> seen;  // scratch: no allocation per call once grown
  found->clear();
  matcher_->FindAll(text, found, &seen);
}

void LiteralPrefilter::Potentials(const std::vector<int>& found, int group,
                                  std::vector<uint32_t>* rules) const {
  rules->clear();
  thread_local std::vector<uint8_t> hit;  // clause -> hit by a found literal; all 0 between calls
  thread_local std::vector<uint32_t> hit_clauses;
  hit.resize(clause_count_, 0);
  hit_clauses.clear();
  for (int literal : found) {
    for (uint32_t clause : literal_clauses_[static_cast<size_t>(literal)]) {
      if (!hit[clause]) {
        hit[clause] = 1;
        hit_clauses.push_back(clause);
      }
    }
  }
  const std::vector<std::vector<uint32_t>>* triggers =
      static_cast<size_t>(group) < triggers_.size() ? &triggers_[static_cast<size_t>(group)] : nullptr;
  for (uint32_t clause : hit_clauses) {
    if (triggers == nullptr) break;
    for (uint32_t t : (*triggers)[clause]) {
      const Term& term = terms_[t];
      bool all = true;
      for (uint32_t i = term.begin; all && i < term.end; ++i) all = hit[term_clauses_[i]] != 0;
      if (all) rules->push_back(term.rule);
    }
  }
  for (uint32_t clause : hit_clauses) hit[clause] = 0;
  if (static_cast<size_t>(group) < always_.size()) {
    const std::vector<uint32_t>& always = always_[static_cast<size_t>(group)];
    rules->insert(rules->end(), always.begin(), always.end());
  }
  std::sort(rules->begin(), rules->end());
  rules->erase(std::unique(rules->begin(), rules->end()), rules->end());
}

}  // namespace bulwark
