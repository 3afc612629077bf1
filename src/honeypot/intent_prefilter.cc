// The extraction-intent grammar's literal prefilter (see intent_prefilter.h).
#include "honeypot/intent_prefilter.h"

#include <absl/container/inlined_vector.h>

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
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n; ++i) {
    if (s[i] >= 0x80) return false;
    for (uint32_t id : one_byte_) {
      if (Lower(s[i]) == static_cast<unsigned char>(atoms_[id][0]))
        found[id / 64] |= uint64_t{1} << (id % 64);
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
      if (j == atom.size()) found[id / 64] |= uint64_t{1} << (id % 64);
    }
  }
  return true;
}

IntentPrefilter::IntentPrefilter(std::unique_ptr<re2::FilteredRE2> filter, std::vector<std::string> atoms)
    : filter_(std::move(filter)), scanner_(std::move(atoms)) {}

std::unique_ptr<IntentPrefilter> IntentPrefilter::Create(const ValidationRules& rules,
                                                         const std::vector<bool>& counted) {
  auto filter = std::make_unique<re2::FilteredRE2>(kMinAtomBytes);
  int added = 0;
  for (size_t i = 0; i < rules.rules().size() && i < counted.size(); ++i) {
    if (!counted[i]) continue;
    const ValidationRule& rule = rules.rules()[i];
    if (rule.view != RuleView::kNormalized) return nullptr;
    int id = -1;
    if (filter->Add(rule.pattern, FilterOptions(), &id) != RE2::NoError) return nullptr;
    ++added;
  }
  if (added == 0) return nullptr;
  std::vector<std::string> atoms;
  filter->Compile(&atoms);
  std::vector<int> always;
  filter->AllPotentials({}, &always);
  if (!always.empty() || atoms.empty()) return nullptr;
  return std::unique_ptr<IntentPrefilter>(new IntentPrefilter(std::move(filter), std::move(atoms)));
}

bool IntentPrefilter::MayMatch(const NormalizedText& normalized) const {
  absl::InlinedVector<uint64_t, 8> found(scanner_.words(), 0);
  if (!scanner_.Find(normalized.folded, std::span<uint64_t>(found.data(), found.size()))) return true;
  if (normalized.deobfuscated != normalized.folded &&
      !scanner_.Find(normalized.deobfuscated, std::span<uint64_t>(found.data(), found.size())))
    return true;
  // FilteredRE2 wants the ids of the atoms found (thread-local scratch: no allocation once grown).
  thread_local std::vector<int> atoms, potential;
  atoms.clear();
  for (size_t w = 0; w < found.size(); ++w) {
    for (uint64_t bits = found[w]; bits != 0; bits &= bits - 1)
      atoms.push_back(static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(bits))));
  }
  potential.clear();
  filter_->AllPotentials(atoms, &potential);
  return !potential.empty();
}

}  // namespace bulwark::honeypot
