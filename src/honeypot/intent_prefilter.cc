// The extraction-intent grammar's literal prefilter (see intent_prefilter.h).
#include "honeypot/intent_prefilter.h"

#include <re2/filtered_re2.h>

#include <algorithm>
#include <numeric>

namespace bulwark::honeypot {
namespace {

// FilteredRE2 leaves out atoms shorter than this (a rule needing only shorter literals is then
// passed always). 2 keeps "db", "is" and "in" as atoms: with 3, a rule whose alternatives include
// "db" passes on any text with "the" (146 of the 350 benign corpus queries instead of none).
constexpr int kMinAtomBytes = 2;

unsigned char Lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + 32) : c; }

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// The rules' RE2 options as far as atoms depend on them (validation_rules.cc: case-insensitive).
RE2::Options FilterOptions() {
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  return options;
}

}  // namespace

AtomScanner::AtomScanner(std::vector<std::string> atoms) : atoms_(std::move(atoms)) {
  for (std::string& atom : atoms_) {
    for (char& c : atom) c = static_cast<char>(Lower(static_cast<unsigned char>(c)));
  }
  // Atoms with a byte >= 0x80 never occur in ASCII text (the only text Find scans): not indexed.
  std::vector<std::pair<uint16_t, uint32_t>> keyed;
  for (uint32_t i = 0; i < atoms_.size(); ++i) {
    const std::string& atom = atoms_[i];
    if (!IsAscii(atom)) continue;
    if (atom.size() == 1) {
      one_byte_.push_back(i);
      continue;
    }
    if (atom.empty()) continue;
    const auto key =
        static_cast<uint16_t>(Key(static_cast<unsigned char>(atom[0]), static_cast<unsigned char>(atom[1])));
    keyed.emplace_back(key, i);
    has_key_[key / 64] |= uint64_t{1} << (key % 64);
  }
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < keyed.size(); ++i) {
    if (i == 0 || keyed[i].first != keyed[i - 1].first) {
      keys_.push_back(keyed[i].first);
      bucket_begin_.push_back(static_cast<uint32_t>(i));
    }
    by_key_.push_back(keyed[i].second);
  }
  bucket_begin_.push_back(static_cast<uint32_t>(keyed.size()));
}

bool AtomScanner::Find(std::string_view text, std::span<uint64_t> found) const {
  return Scan(text, [&](uint32_t id) {
    found[id / 64] |= uint64_t{1} << (id % 64);
    return false;
  });
}

int AtomScanner::FindAny(std::string_view text) const {
  bool any = false;
  if (!Scan(text, [&](uint32_t) { return any = true; })) return -1;
  return any ? 1 : 0;
}

template <typename OnAtom>
bool AtomScanner::Scan(std::string_view text, OnAtom on_atom) const {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    if (s[i] >= 0x80) return false;
    for (uint32_t id : one_byte_) {
      if (Lower(s[i]) == static_cast<unsigned char>(atoms_[id][0]) && on_atom(id)) return true;
    }
    if (i + 1 == n) break;
    const uint32_t key = Key(Lower(s[i]), Lower(s[i + 1] & 0x7f));
    if (((has_key_[key / 64] >> (key % 64)) & 1) == 0) continue;
    const size_t bucket =
        static_cast<size_t>(std::lower_bound(keys_.begin(), keys_.end(), key) - keys_.begin());
    for (uint32_t b = bucket_begin_[bucket]; b < bucket_begin_[bucket + 1]; ++b) {
      const uint32_t id = by_key_[b];
      const std::string& atom = atoms_[id];
      if (atom.size() > n - i) continue;
      size_t j = 2;
      while (j < atom.size() && Lower(s[i + j]) == static_cast<unsigned char>(atom[j])) ++j;
      if (j == atom.size() && on_atom(id)) return true;
    }
  }
  return true;
}

namespace {

// Words most questions to an assistant contain: an atom found in them is a poor trigger.
constexpr std::string_view kCommonWords =
    "what when where which who whom whose why how is are was were be been being do does did done can "
    "could would should will shall may might must have has had having i me my mine we us our you your "
    "yours he him his she her it its they them their this that these those the a an to of in on at for "
    "with about from by into over after before up down out off again then than there here all any some "
    "each every both few more most other such only own same so too very not no nor and or but if as "
    "until while just also still yet ever never once now today tomorrow tonight week month year time day "
    "next last first new old good great best list show tell give get got go going make made take need "
    "want know think say said see look find use call work ask plan note notes remind meeting number "
    "name place thing things way back through";

// Atoms without which FilteredRE2 never passes rule `rule` (its id in `filter`): a set S such that
// the rule is not among the potentials of all atoms but S. The prefilter tree is monotone (AND and
// OR of atoms), so then no text lacking every atom of S can match the rule. Atoms are taken away
// rarest first by a guess (not in kCommonWords, then longer first) until the rule cannot pass, then
// each is put back if the rule stays impossible without it, most common first. Which atoms are
// chosen decides only how many queries the prefilter rules out, never a mask. Empty if the rule
// cannot pass at all.
std::vector<bool> NeededAtoms(const re2::FilteredRE2& filter, int rule,
                              const std::vector<std::string>& atoms) {
  std::vector<uint32_t> rarest_first(atoms.size());
  std::iota(rarest_first.begin(), rarest_first.end(), 0u);
  std::vector<bool> common(atoms.size());
  for (uint32_t a = 0; a < atoms.size(); ++a)
    common[a] = kCommonWords.find(atoms[a]) != std::string_view::npos;
  std::stable_sort(rarest_first.begin(), rarest_first.end(), [&](uint32_t a, uint32_t b) {
    return common[a] != common[b] ? common[b] : atoms[a].size() > atoms[b].size();
  });
  std::vector<bool> removed(atoms.size(), false);
  std::vector<int> kept, potential;
  auto passes = [&] {
    kept.clear();
    for (uint32_t a = 0; a < atoms.size(); ++a) {
      if (!removed[a]) kept.push_back(static_cast<int>(a));
    }
    filter.AllPotentials(kept, &potential);
    std::sort(potential.begin(), potential.end());
    return std::binary_search(potential.begin(), potential.end(), rule);
  };
  if (!passes()) return removed;
  // The shortest prefix of rarest_first whose removal stops the rule (passing is monotone in it).
  size_t low = 0, high = atoms.size();  // removing `high` atoms stops it (all of them: no atom)
  while (low + 1 < high) {
    const size_t mid = (low + high) / 2;
    for (uint32_t i = 0; i < atoms.size(); ++i) removed[rarest_first[i]] = i < mid;
    (passes() ? low : high) = mid;
  }
  for (uint32_t i = 0; i < atoms.size(); ++i) removed[rarest_first[i]] = i < high;
  for (size_t i = high; i-- > 0;) {
    removed[rarest_first[i]] = false;
    if (passes()) removed[rarest_first[i]] = true;
  }
  return removed;
}

}  // namespace

IntentPrefilter::IntentPrefilter(std::vector<std::string> triggers) : scanner_(std::move(triggers)) {}

std::unique_ptr<IntentPrefilter> IntentPrefilter::Create(const ValidationRules& rules,
                                                         const std::vector<bool>& counted) {
  // One FilteredRE2 per rule: its tree has only that rule's few atoms, so finding its triggers
  // takes a few dozen AllPotentials calls instead of thousands.
  std::vector<std::string> triggers;
  bool any = false;
  for (size_t i = 0; i < rules.rules().size() && i < counted.size(); ++i) {
    if (!counted[i]) continue;
    const ValidationRule& rule = rules.rules()[i];
    if (rule.view != RuleView::kNormalized) return nullptr;
    re2::FilteredRE2 filter(kMinAtomBytes);
    int id = -1;
    if (filter.Add(rule.pattern, FilterOptions(), &id) != RE2::NoError) return nullptr;
    std::vector<std::string> atoms;
    filter.Compile(&atoms);
    std::vector<int> always;
    filter.AllPotentials({}, &always);
    if (!always.empty() || atoms.empty()) return nullptr;  // the rule needs no atom
    const std::vector<bool> needed = NeededAtoms(filter, id, atoms);
    for (size_t a = 0; a < atoms.size(); ++a) {
      if (needed[a] && std::find(triggers.begin(), triggers.end(), atoms[a]) == triggers.end())
        triggers.push_back(atoms[a]);
    }
    any = true;
  }
  if (!any) return nullptr;
  return std::unique_ptr<IntentPrefilter>(new IntentPrefilter(std::move(triggers)));
}

bool IntentPrefilter::MayMatch(const NormalizedText& normalized) const {
  const int folded = scanner_.FindAny(normalized.folded);
  if (folded != 0) return true;  // a trigger, or not ASCII
  return normalized.deobfuscated != normalized.folded && scanner_.FindAny(normalized.deobfuscated) != 0;
}

}  // namespace bulwark::honeypot
