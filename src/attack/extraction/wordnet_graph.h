// WordNetGraph: the noun part of Princeton WordNet 3.0 as a graph (Debian `wordnet-base`,
// /usr/share/wordnet: index.noun and data.noun), for the LLM-free generators of the extraction
// attacks: IKEA's anchor candidates (Gen_c, research/mempot.md Sec. 4.4), RAG-Thief's continuation
// terms (Sec. 4.3), MEXTRA-cosine's domain phrases (Sec. 4.1), DGEA's vocabulary and public corpus
// (Sec. 4.2). It keeps, per noun synset, its lemmas, its lexicographer file (noun.body, noun.act,
// ...), its hypernym and hyponym edges (instance ones included) and its gloss.
//
// (embed/wordnet_canonicalizer.h reads the same files for synonym canonicalization but keeps no
// relations; this class is the relation graph it does not provide.)
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark::extraction {

class WordNetGraph {
 public:
  struct Synset {
    uint8_t lexfile = 0;              // lexicographer file number (LexFileName)
    std::vector<std::string> lemmas;  // as written in data.noun, '_' replaced by ' '
    std::vector<int32_t> hypernyms;   // synset indices (@ and @i pointers)
    std::vector<int32_t> hyponyms;    // synset indices (~ and ~i pointers)
    std::string gloss;                // definition and examples, as in data.noun
  };

  // The graph of `dir`, loaded on the first call for that directory and shared by later callers.
  // Thread-safe. Errors: NotFound for a missing file; DataLoss for a line that does not parse or
  // a pointer to an offset that is not a synset; ResourceExhausted for a file over 64 MiB.
  // Failures are not cached. Takes about half a second.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const WordNetGraph>> Shared(const std::string& dir);

  size_t size() const { return synsets_.size(); }
  const Synset& synset(int32_t index) const { return synsets_[index]; }

  // The noun senses of `word` (case-insensitive; spaces or '_' between the words of a compound),
  // most frequent first, as index.noun orders them. Empty if WordNet has no such noun.
  std::vector<int32_t> Senses(std::string_view word) const;

  // Single-word lemmas ([a-z]+, 3..20 letters) of the synsets reachable from the first
  // `max_senses` senses of `word` over at most `hops` hypernym/hyponym edges, in breadth-first
  // order (a synset's own lemmas first), without duplicates and without `word` itself; at most
  // `limit` of them. Sister terms are two hops away (up, then down).
  std::vector<std::string> RelatedLemmas(std::string_view word, int hops, size_t limit,
                                         int max_senses = 2) const;

  // "noun.body", "noun.act", ... for a lexicographer file number; "" if out of range.
  static std::string_view LexFileName(int lexfile);

 private:
  WordNetGraph() = default;
  absl::Status LoadData(const std::string& path);
  absl::Status LoadIndex(const std::string& path);

  std::vector<Synset> synsets_;
  absl::flat_hash_map<std::string, std::vector<int32_t>> senses_;  // lemma (with '_') -> senses
  absl::flat_hash_map<uint64_t, int32_t> index_by_offset_;         // while loading only
};

// The single-word lemma test of RelatedLemmas: [a-z]+, 3..20 letters.
bool IsPlainLemma(std::string_view word);

}  // namespace bulwark::extraction
