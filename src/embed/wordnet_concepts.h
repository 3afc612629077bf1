// WordNetConcepts: WordNet concept features for the store's lexical (BM25) index (issue #19: close
// the category-vs-instance gap, "what do I drink" against a memory about cold brew). A word becomes
// the synsets it may mean, written as terms that no word can equal ("~n7881800" = noun synset
// 07881800, beverage/drink/potable), so BM25 matches a query word's concept against a memory word's
// concept or one of its hypernyms:
//
//   document side (DocumentConcepts): for each part of speech p in {noun, verb} (nouns only
//     unless `verbs`) and the first
//     morphy base form of the word that is a lemma of p: its first `senses` synsets, each with its
//     hypernyms (pointers "@" and "@i") up to `up` levels above it ("coffee" -> coffee,
//     beverage, food, ...), and with `holonyms` its part holonyms ("#p": "knee" -> leg);
//   query side (QueryConcepts): the word's first `senses` synsets of each part of speech (nouns
//     only unless `verbs`), no ancestors (the question names the category, the memory the
//     instance);
//   both sides: a synset whose depth (fewest hypernym steps to a root) is below `min_depth` is
//     left out, so generic concepts ("entity", "object", "act") add nothing; BM25's IDF weighs
//     the rest (a concept most memories carry scores near zero).
//
// Synonyms share their synset, so "jog" and "run for exercise" meet, and "automobile" and "car".
// Reads index.{noun,verb} and data.{noun,verb} of Princeton WordNet 3.0 (Debian wordnet-base);
// base forms come from WordNetCanonicalizer (morphy). Deterministic; thread-safe after loading.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"
#include "embed/wordnet_canonicalizer.h"

namespace bulwark {

struct ConceptOptions {
  int senses = 1;         // synsets taken per word and part of speech, in WordNet's frequency order
  int up = 2;             // hypernym levels added above a document word's synsets
  int min_depth = 4;      // synsets nearer a root than this are left out
  bool holonyms = false;  // document side: add part holonyms of a word's synsets
  bool verbs = true;      // also the word's verb synsets (nouns always)
};

class WordNetConcepts {
 public:
  // Prefix of every concept term; never a byte of a lexical-tokenizer word.
  static constexpr char kPrefix = '~';
  static constexpr int kMaxSenses = 8;
  static constexpr int kMaxUp = 8;

  // The concepts of `dir` (default WordNetCanonicalizer::kDefaultDir): loaded on the first call
  // for that directory and shared for the life of the process. Thread-safe. Errors: those of
  // WordNetCanonicalizer::Shared; DataLoss for a malformed index or data line or an offset outside
  // its data file; not cached on failure.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const WordNetConcepts>> Shared(const std::string& dir);

  // Appends the document-side concept terms of `word` (lowercase ASCII; anything else, stopwords
  // and words WordNet does not know add nothing) to `out`, each once.
  void DocumentConcepts(std::string_view word, const ConceptOptions& options,
                        std::vector<std::string>* out) const;
  // Appends the query-side concept terms of `word` to `out`, each once.
  void QueryConcepts(std::string_view word, const ConceptOptions& options,
                     std::vector<std::string>* out) const;

  // Depth of a synset term (fewest hypernym steps to a root), -1 for an unknown term (tests).
  int Depth(std::string_view term) const;
  // The term of the `sense`-th (0-based) synset of `lemma` as part of speech `pos`, or "" (tests).
  std::string SynsetTerm(std::string_view lemma, WordNetPos pos, int sense) const;

  size_t synset_count() const { return synsets_.size(); }

 private:
  struct Synset {
    std::vector<uint32_t> hypernyms;  // keys
    std::vector<uint32_t> holonyms;   // keys (part holonyms)
    int depth = -1;
  };

  WordNetConcepts() = default;
  absl::Status LoadFrom(const std::string& dir);
  absl::Status LoadPos(const std::string& dir, WordNetPos pos);
  void ComputeDepths();
  // The synsets of `word`'s first base form that is a lemma of `pos`, most frequent first.
  const std::vector<uint32_t>* SensesOf(std::string_view word, WordNetPos pos) const;
  static std::string Term(uint32_t key);

  std::shared_ptr<const WordNetCanonicalizer> morphy_;
  // Per part of speech (noun, verb): lemma -> synset keys in sense order.
  std::array<absl::flat_hash_map<std::string, std::vector<uint32_t>, StringViewHash, StringViewEq>, 2>
      senses_;
  // key = offset << 1 | (1 for a verb)
  absl::flat_hash_map<uint32_t, Synset> synsets_;
};

}  // namespace bulwark
