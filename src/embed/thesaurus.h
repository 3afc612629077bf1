// Thesaurus: the Aiksaurus thesaurus (Debian libaiksaurus-1.2-data, derived from the Moby
// thesaurus; GPL-2+), for the lexical index's optional association terms (issue #19 point 4:
// relate a question and a memory that share no word, without a downloadable model).
//
// The thesaurus is a list of "meanings"; each meaning has two title words (its head words, e.g.
// "drink" and "sup") and a sorted list of member words ("gulp", "quaff", "sip", "swig", ...). A
// word belongs to at most a few meanings. Two files in the package's directory:
//   words.dat:    per word, in word-id order: the word's bytes (lowercase ASCII, ':' between the
//                 parts of a multi-word entry), a NUL, its meaning ids as big-endian uint16, and
//                 0xFFFF;
//   meanings.dat: per meaning, in meaning-id order: its word ids as big-endian uint16 (the two
//                 titles first, then the members) and 0xFFFF.
// Only single words are kept (a multi-word entry can never equal one token); words are
// lowercased, and upper-case variants join their lowercase word.
//
// Both files are untrusted bytes: each is read under a size bound, every record must be complete,
// every id must name an existing word or meaning, words are 1..kMaxWordBytes printable ASCII
// bytes, and a meaning has two titles and at most kMaxMeaningWords words: anything else is
// DataLoss, never a crash. Immutable and thread-safe after loading.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"

namespace bulwark {

class Thesaurus {
 public:
  // Where Debian's libaiksaurus-1.2-data puts words.dat and meanings.dat.
  static constexpr std::string_view kDefaultDir = "/usr/share/aiksaurus";
  // Bounds of the untrusted files (the Debian files: 394,412 and 125,814 bytes).
  static constexpr uint64_t kMaxFileBytes = uint64_t{16} << 20;
  static constexpr size_t kMaxWordBytes = 64;
  static constexpr size_t kMaxMeaningWords = 4096;
  static constexpr size_t kMaxMeaningsPerWord = 64;

  // The thesaurus of `dir` (words.dat, meanings.dat): loaded on the first call for that directory
  // and shared for the life of the process. Thread-safe. Errors: NotFound for a missing file,
  // ResourceExhausted for a file over kMaxFileBytes, DataLoss for malformed bytes (Parse).
  // Failures are not cached.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const Thesaurus>> Shared(const std::string& dir);

  // The thesaurus of the two files' bytes. DataLoss (naming the file and the record) for a
  // truncated record, an odd trailing byte, an empty or over-long word, a byte outside printable
  // ASCII, an id out of range, a meaning with fewer than two titles or over kMaxMeaningWords
  // words, a word in over kMaxMeaningsPerWord meanings, or more than 65,535 words or meanings.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const Thesaurus>> Parse(std::string_view words_dat,
                                                                              std::string_view meanings_dat);

  // Calls fn(term_id) for each title of each meaning that lists `word` (a lowercase word), except
  // `word` itself: "espresso" -> its meanings' heads. Nothing for an unknown word.
  template <typename Fn>
  void ForEachHead(std::string_view word, Fn&& fn) const {
    ForEach(word, /*members=*/false, fn);
  }
  // Calls fn(term_id) for every word (titles and members) of each meaning that lists `word`,
  // except `word` itself.
  template <typename Fn>
  void ForEachMember(std::string_view word, Fn&& fn) const {
    ForEach(word, /*members=*/true, fn);
  }

  bool Contains(std::string_view word) const { return meanings_of_.contains(word); }
  // The text of a term id (a lowercase single word).
  std::string_view term(uint32_t id) const { return terms_[id]; }
  size_t term_count() const { return terms_.size(); }
  size_t meaning_count() const { return meanings_.size(); }

 private:
  struct Meaning {
    uint32_t begin = 0, titles_end = 0, end = 0;  // its single-word term ids: words_[begin, end)
  };

  Thesaurus() = default;
  [[nodiscard]] absl::Status ParseMeanings(std::string_view bytes, std::vector<std::vector<uint16_t>>* out);
  [[nodiscard]] absl::Status ParseWords(std::string_view bytes, size_t meaning_count,
                                        std::vector<std::string>* texts, std::vector<uint32_t>* term_of);
  uint32_t TermId(std::string_view lower);

  template <typename Fn>
  void ForEach(std::string_view word, bool members, Fn& fn) const {
    const auto it = meanings_of_.find(word);
    if (it == meanings_of_.end()) return;
    for (const uint32_t m : it->second) {
      const Meaning& meaning = meanings_[m];
      const uint32_t end = members ? meaning.end : meaning.titles_end;
      for (uint32_t i = meaning.begin; i < end; ++i) {
        if (terms_[words_[i]] != word) fn(words_[i]);
      }
    }
  }

  std::vector<std::string> terms_;
  absl::flat_hash_map<std::string, uint32_t, StringViewHash, StringViewEq> term_ids_;
  std::vector<uint32_t> words_;  // meanings' term ids, titles first (single words only)
  std::vector<Meaning> meanings_;
  absl::flat_hash_map<std::string, std::vector<uint32_t>, StringViewHash, StringViewEq> meanings_of_;
};

}  // namespace bulwark
