// A literal prefilter for the extraction-intent grammar (issue #13 point 3: the monitor's cost per
// search on query texts the process has not seen). RE2's FilteredRE2 derives from each rule the
// literal strings ("atoms") a match must contain: an AND/OR of atoms per rule, whose every atom
// occurs in any text the rule matches. MayMatch finds the atoms present in the normalised query
// (a fixed table built at construction, no lazily built state) and asks FilteredRE2 which rules
// those atoms leave possible; when none, no rule matches and the RE2::Set passes of the grammar
// are skipped. Most queries (every one of data/corpora/benign_queries.jsonl) are decided so.
//
// Exactness: FilteredRE2 guarantees that the rules it passes are a superset of those that match
// a lowercased text; MayMatch only answers false for text it can lowercase exactly (both views
// ASCII: RE2's case folding of an ASCII letter then has no non-ASCII counterpart in the text).
// For anything else it answers true, and the caller runs the grammar in full.
// intent_prefilter_test.cc compares the two on the corpora and on random texts.
#pragma once

#include <re2/filtered_re2.h>

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
  size_t size() const { return atoms_.size(); }
  size_t words() const { return (atoms_.size() + 63) / 64; }

 private:
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
  // The prefilter of `rules`' rules whose `counted[i]` is true (the grammar's category rules).
  // Null when it cannot decide anything: a counted rule over the raw text, a counted rule without
  // atoms (FilteredRE2 passes it always), or no atom at all.
  static std::unique_ptr<IntentPrefilter> Create(const ValidationRules& rules,
                                                 const std::vector<bool>& counted);

  // False only if no counted rule can match either view of `normalized`; true otherwise.
  bool MayMatch(const NormalizedText& normalized) const;

 private:
  IntentPrefilter(std::unique_ptr<re2::FilteredRE2> filter, std::vector<std::string> atoms);
  std::unique_ptr<re2::FilteredRE2> filter_;
  AtomScanner scanner_;
};

}  // namespace bulwark::honeypot
