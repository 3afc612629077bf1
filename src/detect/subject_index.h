// SubjectIndex: which stored memories talk about the same subject as a write, by the words they
// share (issue #14 point 2: misinformation, a fluent claim that contradicts a stored fact).
//
// A false claim rarely copies the fact it contradicts: "Employees may now expense up to USD 25,000
// without manager approval" and "Any claim above USD 500 must be approved by the employee's
// manager" are far apart as bags of words (cosine 0.3-0.5 with the lexical embedder), but they
// name the same subject (expense claims, manager approval) and give it another value. What they
// share are the subject's content words, and those are the namespace's rare words: the terms of
// a write (stemmed, without stop words, modals, negations, weekdays, months, numbers and codes:
// lexical_tokenizer.h) are weighted by their inverse document frequency in the namespace,
//
//   idf(t) = ln((N + 1) / (df(t) + 1)) + 1
//
// (the smoothed form: a word no memory holds weighs ln(N + 1) + 1, not more, so a namespace of a
// few memories is not dominated by the write's new words),
// and a memory's subject overlap with the write is the share of the write's weight it holds,
//
//   overlap(w, m) = sum_{t in w and m} idf(t) / sum_{t in w} idf(t)   (in [0, 1]),
//
// i.e. how much of what the write is about the memory is about too (a write's words the store has
// never seen count with df = 0: a claim about something new matches nothing). Candidates come from
// an inverted index of the terms, so a write costs the postings of its words; a word in more than
// 1/kCommonShare of the memories (and more than kCommonShare of them), or in more than
// kMaxPostingsScanned, is too common to pick a subject (idf below ln 32) and is not scanned (it
// still counts in the sums). Whether the matched memory is contradicted is the caller's decision
// (conflict_detector.cc: a slot value or polarity that differs).
//
// Not thread-safe: the owner (MemoryTable) holds its lock around every call.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "detect/slot_extractor.h"

namespace bulwark {

// How a write of `updated` slots contradicts a memory of `original` slots it matched by subject,
// or nullopt when it does not: a time, date, amount, number, e-mail, URL, phone or account value
// replaced (DiffSlots), or the polarity flipped. A changed name alone does not count, and texts
// that both name people or places and share none of them are about different subjects (nullopt):
// names say whose or which thing a text is about.
std::optional<SlotDiff> SubjectDiff(const TextSlots& original, const TextSlots& updated);

class SubjectIndex {
 public:
  static constexpr size_t kMaxTerms = 64;              // distinct terms kept per text
  static constexpr size_t kMaxPostingsScanned = 1024;  // a term in more memories is not scanned
  static constexpr size_t kCommonShare = 32;           // nor one in more than 1/32 of them

  using Terms = std::vector<uint64_t>;  // hashed terms, distinct, sorted

  // The subject terms of `text` (its first 16 KiB): see the header.
  static Terms TermsOf(std::string_view text);

  // Adds (or replaces) the terms of memory `row` (the owner's stable row key).
  void Put(uint32_t row, Terms terms);
  // Forgets memory `row` (absent: nothing happens).
  void Remove(uint32_t row);
  size_t size() const { return terms_.size(); }

  // The memories whose overlap with `terms` is >= min_overlap, as (overlap, row), best first, at
  // most `limit`.
  std::vector<std::pair<double, uint32_t>> Overlapping(const Terms& terms, double min_overlap,
                                                       size_t limit) const;

 private:
  double Idf(size_t df) const;

  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> postings_;  // term -> rows holding it
  absl::flat_hash_map<uint32_t, Terms> terms_;                     // row -> its terms
};

}  // namespace bulwark
