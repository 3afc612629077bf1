// WordNetGlosses: the "gloss neighbourhood" of a word, for the lexical embedder's optional gloss
// feature group (issue #19 point 4: relate a question and a memory that share few words, "what
// vehicle do I own" and "I drive a Subaru", without a downloadable model).
//
// A word's related words are, for each part of speech in which it is a lemma and its first
// `senses` synsets there (WordNet's frequency order), the union over those synsets of
//   - the synset's own lemmas ("photograph" -> photo, exposure, picture),
//   - the content words of its definition, the gloss text before the first quoted example
//     ("drive" -> operate, control, vehicle; "penicillin" -> antibiotic, obtain, mold),
//   - the lemmas of the synsets it points to by hypernym ("@", "@i"), derivation ("+"),
//     similar-to ("&") and pertainym ("\") pointers ("vegetarian" -> vegetarianism, eater).
// Multi-word lemmas contribute their words; every word is canonicalized with the
// WordNetCanonicalizer (so "beverages" and "drinks" meet their lemma), stopwords and words outside
// [a-z] are dropped, and each related word appears once per synset. This is the first-order
// "gloss vector" of Patwardhan & Pedersen (2006, "Using WordNet-based context vectors to estimate
// the semantic relatedness of concepts", EACL workshop): two texts are related when the gloss
// neighbourhoods of their words overlap.
//
// Reads index.{noun,verb,adj,adv} and data.{noun,verb,adj,adv} of Princeton WordNet 3.0 (Debian
// wordnet-base). Every field read is bounds-checked: a damaged database yields DataLoss, never a
// crash. Deterministic; immutable and thread-safe after loading.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"
#include "embed/wordnet_canonicalizer.h"

namespace bulwark {

class WordNetGlosses {
 public:
  // Synsets kept per lemma and part of speech (the rest are never asked for).
  static constexpr int kMaxSenses = 4;
  // XXH3-64 seed of Key(): "bulwark4".
  static constexpr uint64_t kKeySeed = 0x62756c7761726b34;

  // The feature key of a word: XXH3-64 of its bytes under kKeySeed.
  static uint64_t Key(std::string_view word);

  // The glosses of `dir`: loaded on the first call for that directory (about 0.5-1 s) and shared
  // for the life of the process. Thread-safe. Errors: those of WordNetCanonicalizer::Shared;
  // NotFound for a missing file; ResourceExhausted for a file over 256 MiB; DataLoss for a
  // malformed line or a pointer to a synset that does not exist. Failures are not cached.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const WordNetGlosses>> Shared(const std::string& dir);

  // Calls fn(related_word_id) for every related word of `word` (a canonical lowercase word, as
  // WordNetCanonicalizer::Canonicalize returns) over its first `senses` (clamped to 1 ..
  // kMaxSenses) synsets of each part of speech; a word related through several synsets is
  // reported once per synset. Nothing for a word WordNet does not know. Allocation-free.
  template <typename Fn>
  void ForEachRelated(std::string_view word, int senses, Fn&& fn) const {
    const auto it = lemmas_.find(word);
    if (it == lemmas_.end()) return;
    for (const SenseRef& sense : it->second) {
      if (sense.rank >= senses) continue;
      const Synset& synset = synsets_[sense.synset];
      for (uint32_t i = synset.begin; i < synset.end; ++i) fn(related_[i]);
    }
  }

  // The canonical text of a related word id, its Key() and its IDF (embed/idf_table.h IdfLookup),
  // both computed once at load.
  std::string_view word(uint32_t id) const { return words_[id]; }
  uint64_t key(uint32_t id) const { return keys_[id]; }
  float idf(uint32_t id) const { return idfs_[id]; }
  size_t word_count() const { return words_.size(); }
  size_t synset_count() const { return synsets_.size(); }

 private:
  struct SenseRef {
    uint32_t synset;  // index into synsets_
    int32_t rank;     // 0 = the most frequent sense of the lemma in that part of speech
  };
  struct Synset {
    uint32_t begin = 0, end = 0;  // its related word ids: related_[begin, end)
  };
  struct ParsedSynset;

  WordNetGlosses() = default;
  absl::Status LoadFrom(const std::string& dir);
  absl::Status ParseData(const std::string& dir, int pos, std::vector<ParsedSynset>* parsed);
  absl::Status ParseIndex(const std::string& dir, int pos);
  // The id of canonical word `word`, added if new.
  uint32_t WordId(std::string_view word);
  // Appends the ids of the canonicalized content words of `text` (words split at non-letters).
  void AddWords(std::string_view text, std::vector<uint32_t>* out);

  std::shared_ptr<const WordNetCanonicalizer> canonicalizer_;
  absl::flat_hash_map<std::string, uint32_t, StringViewHash, StringViewEq> word_ids_;
  std::vector<std::string> words_;
  std::vector<uint64_t> keys_;
  std::vector<float> idfs_;
  std::vector<uint32_t> related_;
  std::vector<Synset> synsets_;
  // (part of speech, byte offset) -> index into synsets_, while loading.
  absl::flat_hash_map<uint64_t, uint32_t> synset_at_;
  absl::flat_hash_map<std::string, std::vector<SenseRef>, StringViewHash, StringViewEq> lemmas_;
};

}  // namespace bulwark
