// WordNet synonym canonicalization for the lexical embedder: maps a word to one representative
// lemma of its most frequent sense, so that synonyms ("car", "automobile", "cars") hash to the
// same features. Reads the Princeton WordNet 3.0 database files as shipped by Debian's
// `wordnet-base` package (/usr/share/wordnet): index.{noun,verb,adj,adv},
// data.{noun,verb,adj,adv}, {noun,verb,adj,adv}.exc and cntlist.rev.
//
// The mapping of a lowercase word w:
//   1. Stopwords (a fixed list of function words: "a", "is", "in", "it", ...), words shorter
//      than 2 or longer than kMaxWordBytes bytes, and words with characters outside [a-z] are
//      returned unchanged. (Many stopwords are also WordNet nouns: "a" -> vitamin A, "in" -> inch.)
//   2. Base forms, per part of speech p, as WordNet's morphy computes them: if w is in p.exc,
//      then w and its listed base forms; otherwise w and the results of p's detachment rules
//      (noun: -s, -ses>-s, -xes>-x, -zes>-z, -ches>-ch, -shes>-sh, -men>-man, -ies>-y; verb: -s,
//      -ies>-y, -es>-e, -es, -ed>-e, -ed, -ing>-e, -ing; adj: -er, -est, -er>-e, -est>-e; adv:
//      none). Only forms that are lemmas of p in index.p count.
//   3. Among all (base form, p) candidates, the most frequent one wins: the one whose senses in p
//      were tagged most often in the semantic concordance (cntlist.rev: the tag counts of all
//      sense keys "form%<p>:..." summed; adjective satellites count as adjectives). Ties go to the
//      earlier part of speech in the order noun, verb, adj, adv, then to the earlier form (w
//      itself before its base forms). So "want" is a verb (409 tags vs. 6 as a noun), "way" a
//      noun, "still" an adverb.
//   4. The winner's first-listed synset in index.p is its most frequent sense. The canonical
//      representative of that synset is its first lemma (in data.p order) that is a single word
//      of [a-z0-9] after lowercasing; if it has none, its first lemma (lowercased, adjective
//      markers such as "(a)" removed). Examples: "automobile" -> "car", "bought" -> "buy",
//      "purchased" -> "buy", "mice" -> "mouse", "running" -> "run".
//   5. Words WordNet does not know are returned unchanged.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"

namespace bulwark {

enum class WordNetPos { kNoun = 0, kVerb = 1, kAdj = 2, kAdv = 3 };

class WordNetCanonicalizer {
 public:
  static constexpr std::string_view kDefaultDir = "/usr/share/wordnet";
  static constexpr size_t kMaxWordBytes = 48;

  // OK if every file the canonicalizer reads exists in `dir` as a regular file; NotFound naming
  // the first missing one otherwise.
  [[nodiscard]] static absl::Status CheckDataPresent(const std::string& dir);

  // The canonicalizer for `dir`: loaded on the first call for that directory and shared by every
  // later caller for the life of the process. Thread-safe. Errors: NotFound if a file is missing;
  // DataLoss if a file does not parse (a malformed line, an offset outside its data file);
  // ResourceExhausted if a file is implausibly large (over 256 MiB). Failures are not cached.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const WordNetCanonicalizer>> Shared(
      const std::string& dir);

  // Loads a private instance (no cache); same errors as Shared(). Takes about 0.2 s.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<WordNetCanonicalizer>> Load(const std::string& dir);

  // The canonical form of `word` (expected lowercase ASCII, as the lexical tokenizer produces),
  // following steps 1-5 above. The result views either `word` or storage owned by this object.
  // Thread-safe, allocation-free; one hash lookup for words that WordNet lists verbatim.
  std::string_view Canonicalize(std::string_view word) const;

  // Morphy's base forms of `word` as part of speech `pos` (step 2), in order, without duplicates.
  // Empty if none is a lemma of `pos`.
  std::vector<std::string> BaseForms(std::string_view word, WordNetPos pos) const;

  // True if `word` is on the fixed stopword list.
  static bool IsStopword(std::string_view word);

  // SHA-256 (hex) over the names and contents of the 13 files read; part of the lexical
  // embedder's fingerprint, so a different WordNet version yields a different vector space.
  const std::string& data_digest() const { return data_digest_; }

  // Number of single-word lemmas (all parts of speech merged) known to the canonicalizer.
  size_t lemma_count() const { return lemmas_.size(); }

  // Calls fn(lemma) for every single-word lemma, in no particular order.
  template <typename Fn>
  void ForEachLemma(Fn&& fn) const {
    for (const auto& [lemma, senses] : lemmas_) fn(std::string_view(lemma));
  }

 private:
  // Per part of speech: the canonical representative of the lemma's first sense (an index into
  // canonical_names_, -1 if the lemma is not in that part of speech) and the lemma's summed tag
  // count in that part of speech (cntlist.rev).
  struct PosSense {
    int32_t canonical = -1;
    int32_t tag_count = 0;
  };
  using LemmaSenses = std::array<PosSense, 4>;

  WordNetCanonicalizer() = default;

  absl::Status LoadFrom(const std::string& dir);
  // LoadFrom's steps: the lemmas of index.<pos> (part of speech p) with their first sense's
  // representative from data.<pos> (a new one per synset in `synset_ids`); the inflections of
  // <pos>.exc; the tag counts of cntlist.rev. DataLoss naming the file and line of a bad line.
  absl::Status LoadIndex(int p, const std::string& index_name, std::string_view index_file,
                         const std::string& data_name, std::string_view data_file,
                         absl::flat_hash_map<uint64_t, int32_t>* synset_ids);
  void LoadExceptions(int p, std::string_view exc_file);
  absl::Status LoadTagCounts(std::string_view counts_file);
  // Calls fn(form) for every morphy base form of `word` in `pos` that is a lemma of `pos`
  // (possibly with repeats), without allocating.
  template <typename Fn>
  void ForEachBaseForm(std::string_view word, WordNetPos pos, Fn&& fn) const;
  // Steps 2-4: the canonical_names_ index for `word`, or -1 if WordNet does not know it.
  int32_t Resolve(std::string_view word) const;

  // Single-word lemmas ([a-z]+) of all parts of speech.
  absl::flat_hash_map<std::string, LemmaSenses, StringViewHash, StringViewEq> lemmas_;
  // Per part of speech: inflected form -> base forms, from the .exc files ([a-z]+ forms only).
  std::array<absl::flat_hash_map<std::string, std::vector<std::string>, StringViewHash, StringViewEq>, 4>
      exceptions_;
  // Precomputed Resolve() for every lemma and every exception form: the fast path.
  absl::flat_hash_map<std::string, int32_t, StringViewHash, StringViewEq> resolved_;
  // Canonical representatives, one per distinct first-sense synset.
  std::vector<std::string> canonical_names_;
  std::string data_digest_;
};

}  // namespace bulwark
