// A literal prefilter for the extraction-intent grammar (issue #13 point 3: the monitor's cost per
// search on query texts the process has not seen). RE2's FilteredRE2 derives from each rule the
// literal strings ("atoms") a match must contain, as an AND/OR tree per rule: a rule can match a
// text only if the atoms present in the (lowercased) text satisfy its tree. At construction each
// rule's tree is reduced to a set of "trigger" atoms it cannot pass without (mostly the words of
// one of its required word lists: "repeat|reproduce|..."); a query none of whose normalised views
// holds a trigger cannot match any rule, and the grammar's RE2::Set passes are skipped. The
// triggers are found by a fixed table built at construction (no lazily built state shared
// between callers). 255 of the 350 queries of data/corpora/benign_queries.jsonl are decided so.
//
// Exactness: FilteredRE2 guarantees that the rules it passes are a superset of those that match;
// the tree is monotone, so a rule not passed with every atom but its triggers is not passed with
// fewer. MayMatch only answers false for text it can lowercase exactly (both views ASCII: RE2's
// case folding of an ASCII letter then has no non-ASCII counterpart in the text). For anything
// else it answers true, and the caller runs the grammar in full.
// intent_prefilter_test.cc compares the two on the corpora and on random texts.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detect/text_normalizer.h"
#include "detect/validation_rules.h"

namespace bulwark::honeypot {

// Which of a fixed set of strings occur in an ASCII text, compared case-insensitively.
class AtomScanner {
 public:
  explicit AtomScanner(std::vector<std::string> atoms);
  // Sets bit i of `found` (sized to the atoms, in 64-bit words) for every atom i that occurs in
  // `text`. False, with `found` incomplete, if `text` has a byte >= 0x80.
  bool Find(std::string_view text, std::span<uint64_t> found) const;
  // 1 if some atom occurs in `text`, 0 if none does, -1 if `text` has a byte >= 0x80.
  int FindAny(std::string_view text) const;
  size_t size() const { return atoms_.size(); }
  size_t words() const { return (atoms_.size() + 63) / 64; }

 private:
  // Calls on_atom(id) for atoms found until it returns true; false if a byte is >= 0x80.
  template <typename OnAtom>
  bool Scan(std::string_view text, OnAtom on_atom) const;
  static constexpr size_t kKeys = 128 * 128;  // two ASCII bytes
  static uint32_t Key(unsigned char a, unsigned char b) { return (uint32_t{a} << 7) | b; }

  std::vector<std::string> atoms_;      // lowercase
  std::vector<uint16_t> keys_;          // the first two bytes of atoms of 2+ bytes, sorted
  std::vector<uint32_t> bucket_begin_;  // keys_[i]'s atoms: by_key_[bucket_begin_[i], [i + 1])
  std::vector<uint32_t> by_key_;        // atom ids ordered by key
  std::vector<uint32_t> one_byte_;      // atoms of one byte
  uint64_t has_key_[kKeys / 64] = {};   // bit Key(a, b): some atom starts with a, b
};

class IntentPrefilter {
 public:
  // The prefilter of `rules`' rules whose `counted[i]` is true (the grammar's category rules); each
  // rule's pattern is compiled once more (FilteredRE2), about 1 ms a rule. Null when it cannot
  // decide anything: a counted rule over the raw text, or one without atoms (FilteredRE2 passes it
  // always), or no counted rule.
  static std::unique_ptr<IntentPrefilter> Create(const ValidationRules& rules,
                                                 const std::vector<bool>& counted);

  // False only if no counted rule can match either view of `normalized`; true otherwise.
  bool MayMatch(const NormalizedText& normalized) const;

 private:
  explicit IntentPrefilter(std::vector<std::string> triggers);
  AtomScanner scanner_;  // the trigger atoms
};

}  // namespace bulwark::honeypot
