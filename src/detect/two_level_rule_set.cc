#include "detect/two_level_rule_set.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "detect/rule_atoms.h"

namespace bulwark {

namespace {

// How much finding an atom tells: nothing (it matches almost any text), little (it matches
// English function words, which most texts have, and costs a DFA match on each), or something.
enum class AtomStrength { kNone, kWeak, kStrong, kInvalid };

constexpr size_t kMaxAtomsPerAlternative = 2;

AtomStrength Strength(const RE2& re) {
  if (!re.ok()) return AtomStrength::kInvalid;
  for (const char* probe : {"", "a", "a b. c,\n"}) {
    if (RE2::PartialMatch(probe, re)) return AtomStrength::kNone;
  }
  static constexpr const char* kFunctionWords =
      "to the a an of and in on at for with as by from is are was be it this that these those all "
      "any every each my your our their his her its me you we they i not do don't no can will would "
      "should must also too before after then when if so but or up out about into over one other";
  return RE2::PartialMatch(kFunctionWords, re) ? AtomStrength::kWeak : AtomStrength::kStrong;
}

}  // namespace

TwoLevelRuleSet::TwoLevelRuleSet(const RE2::Options& options)
    : options_(options), atom_set_(std::make_unique<RE2::Set>(options, RE2::UNANCHORED)) {}

TwoLevelRuleSet::~TwoLevelRuleSet() = default;

absl::Status TwoLevelRuleSet::Add(std::string_view pattern) {
  auto whole = std::make_unique<RE2>(re2::StringPiece(pattern.data(), pattern.size()), options_);
  if (!whole->ok()) return absl::InvalidArgumentError(whole->error());
  RuleAtoms split = SplitAtGaps(pattern);
  // Every atom must compile on its own; if one does not, the rule is kept whole (still correct).
  // Atoms that match almost any text (`\b`, `\s*`, `={0,2}`) are left out, and weak ones
  // (`\bto\s+`) where the alternative has a strong one; an alternative left without atoms is its
  // own atom, whole. Leaving atoms out only weakens the necessary condition.
  // Rules and their multiplied-out alternatives repeat atoms: each distinct atom is compiled and
  // probed once (until Compile).
  auto strength_of = [&](const std::string& atom) {
    auto [it, inserted] = atom_strength_.try_emplace(atom);
    if (inserted) it->second = static_cast<int>(Strength(RE2(atom, options_)));
    return static_cast<AtomStrength>(it->second);
  };
  bool atoms_compile = true;
  for (RuleAlternative& alternative : split.alternatives) {
    if (!alternative.has_gap) {
      atoms_compile &= strength_of(alternative.atoms[0]) != AtomStrength::kInvalid;
      continue;
    }
    std::vector<std::string> strong, weak;
    for (std::string& atom : alternative.atoms) {
      const AtomStrength strength = strength_of(atom);
      atoms_compile &= strength != AtomStrength::kInvalid;
      if (strength == AtomStrength::kStrong || strength == AtomStrength::kWeak)
        (strength == AtomStrength::kStrong ? strong : weak).push_back(std::move(atom));
    }
    alternative.atoms = strong.empty() ? std::move(weak) : std::move(strong);
    // The two shortest atoms only: each atom more in the set costs DFA states on unseen text
    // (on the default grammar's 2,661 test texts: all strong atoms, 437 in all, 140 us per text
    // on the first pass; two per alternative, 418 atoms, 116 us; one, 74 us but 4.3 candidates
    // per text to verify instead of 0.7).
    std::stable_sort(alternative.atoms.begin(), alternative.atoms.end(),
                     [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
    if (alternative.atoms.size() > kMaxAtomsPerAlternative) alternative.atoms.resize(kMaxAtomsPerAlternative);
    if (alternative.atoms.empty()) alternative = {{alternative.text}, false, alternative.text};
  }
  if (!atoms_compile) {
    split.alternatives.clear();
    split.alternatives.push_back({{std::string(pattern)}, false, std::string(pattern)});
  }
  const uint32_t rule = static_cast<uint32_t>(rules_.size());
  for (const RuleAlternative& alternative : split.alternatives) {
    absl::InlinedVector<uint32_t, 4> ids;
    for (const std::string& atom : alternative.atoms) {
      auto it = std::find(atom_patterns_.begin(), atom_patterns_.end(), atom);
      uint32_t id = static_cast<uint32_t>(it - atom_patterns_.begin());
      if (it == atom_patterns_.end()) {
        std::string error;
        if (atom_set_->Add(atom, &error) < 0) return absl::InvalidArgumentError(error);
        atom_patterns_.push_back(atom);
      }
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    const auto begin = static_cast<uint32_t>(alternative_atoms_.size());
    alternative_atoms_.insert(alternative_atoms_.end(), ids.begin(), ids.end());
    alternatives_.push_back(
        {rule, begin, static_cast<uint32_t>(alternative_atoms_.size()), !alternative.has_gap});
  }
  rules_.push_back(std::move(whole));
  return absl::OkStatus();
}

absl::Status TwoLevelRuleSet::Compile() {
  atom_strength_.clear();
  if (!atom_patterns_.empty() && !atom_set_->Compile())
    return absl::ResourceExhaustedError("two-level rule set: RE2 atom set does not compile");
  // Each alternative is looked at only when its trigger, the atom of it held by the fewest
  // alternatives, was found.
  std::vector<uint32_t> holders(atom_patterns_.size(), 0);
  for (uint32_t atom : alternative_atoms_) ++holders[atom];
  triggered_.assign(atom_patterns_.size(), {});
  for (uint32_t a = 0; a < alternatives_.size(); ++a) {
    const Alternative& alternative = alternatives_[a];
    uint32_t trigger = alternative_atoms_[alternative.begin];
    for (uint32_t i = alternative.begin; i < alternative.end; ++i) {
      if (holders[alternative_atoms_[i]] < holders[trigger]) trigger = alternative_atoms_[i];
    }
    triggered_[trigger].push_back(a);
  }
  return absl::OkStatus();
}

bool TwoLevelRuleSet::FindCandidates(std::string_view text, Candidates* out) const {
  out->clear();
  if (atom_patterns_.empty()) return true;
  thread_local std::vector<int> found;  // scratch: no allocation per call once grown
  RE2::Set::ErrorInfo error;
  if (!atom_set_->Match(re2::StringPiece(text.data(), text.size()), &found, &error)) {
    if (error.kind != RE2::Set::kOutOfMemory) return true;  // no atom occurs: no candidate
    for (uint32_t rule = 0; rule < rules_.size(); ++rule) out->push_back({rule, false});
    return false;
  }
  absl::InlinedVector<uint64_t, 16> found_bits((atom_patterns_.size() + 63) / 64, 0);
  for (int atom : found) found_bits[static_cast<size_t>(atom) / 64] |= uint64_t{1} << (atom % 64);
  // The alternatives whose trigger was found and whose every atom was found.
  absl::InlinedVector<uint32_t, 16> holding;
  for (int atom : found) {
    for (uint32_t a : triggered_[static_cast<size_t>(atom)]) {
      const Alternative& alternative = alternatives_[a];
      bool all = true;
      for (uint32_t i = alternative.begin; all && i < alternative.end; ++i) {
        const uint32_t id = alternative_atoms_[i];
        all = (found_bits[id / 64] >> (id % 64)) & 1;
      }
      if (all) holding.push_back(a);
    }
  }
  // Alternatives are numbered in rule order, so sorted they give the candidates ascending.
  std::sort(holding.begin(), holding.end());
  for (uint32_t a : holding) {
    const Alternative& alternative = alternatives_[a];
    if (!out->empty() && out->back().rule == alternative.rule) {
      out->back().exact |= alternative.exact;
    } else {
      out->push_back({alternative.rule, alternative.exact});
    }
  }
  return true;
}

bool TwoLevelRuleSet::Verify(const Candidate& c, std::string_view text) const {
  return c.exact || RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *rules_[c.rule]);
}

void TwoLevelRuleSet::Match(std::string_view text, std::vector<uint32_t>* out) const {
  out->clear();
  Candidates candidates;
  FindCandidates(text, &candidates);
  for (const Candidate& c : candidates) {
    if (Verify(c, text)) out->push_back(c.rule);
  }
}

void TwoLevelRuleSet::MatchOneByOne(std::string_view text, std::vector<uint32_t>* out) const {
  out->clear();
  for (uint32_t rule = 0; rule < rules_.size(); ++rule) {
    if (RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *rules_[rule])) out->push_back(rule);
  }
}

}  // namespace bulwark
