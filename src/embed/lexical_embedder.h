// LexicalEmbedder: Bulwark's embedded default embedder. No model, no downloads: a text becomes a
// 384-dimensional signed feature-hashing vector of its words, word pairs and character n-grams,
// weighted by sublinear term frequency and a fixed IDF table, optionally after WordNet synonym
// canonicalization. Deterministic across runs and machines: xxHash (XXH3-64) with fixed seeds,
// ASCII-only lowercasing (no locale), a compiled-in IDF table, fixed summation order.
//
// The algorithm (version kAlgorithmVersion; any change to it must bump the version, which changes
// the fingerprint, so stores built with the old vectors refuse to open with the new ones):
//  1. Tokenize: only the first kMaxTextBytes (64 KiB) of the text count, cut before a token that
//     crosses the limit (a context window, as neural encoders have, bounding time and memory).
//     Lowercase A-Z; a token is a maximal run of bytes in [a-z0-9] or >= 0x80 (so UTF-8 text
//     outside ASCII stays in tokens, byte-for-byte, without case folding).
//  2. With synonyms on, replace each token by WordNetCanonicalizer::Canonicalize(token)
//     ("automobile" -> "car", "bought" -> "buy", "mice" -> "mouse").
//  3. Token IDF: IdfFind(canonical token) if the table lists it, else IdfLookup(surface token)
//     (idf_table.h; WordNet glosses; unknown words get the largest IDF). Synonyms thus share
//     both their features and, usually, their weight.
//  4. Features, each hashed with XXH3-64 under its group's seed:
//       unigram   t_i                          idf(t_i)
//       bigram    (t_i, t_i+1)                 (idf(t_i) + idf(t_i+1)) / 2
//       char      3-, 4- and 5-byte n-grams of "<" t_i ">"   idf(t_i), max over occurrences
//     A feature's value is (1 + ln tf) * idf, tf its count in the text. Hash h selects coordinate
//     ((h >> 32) * 384) >> 32 with sign + if (h & 1) == 0, else -.
//  5. The three groups are accumulated separately, each L2-normalized, combined as
//       v = kUnigramWeight * u + kBigramWeight * b + kCharNgramWeight * c
//     and v is L2-normalized. Weights 1.0 / 0.4 / 0.8: whole words carry the meaning (about 55 %
//     of the squared norm), char n-grams let inflections, compounds and typos overlap (35 %)
//     without letting long words dominate (the group is normalized as a whole), bigrams add a
//     little word order (9 %). On a small set of 16 memory-style paraphrase pairs this mix
//     separated paraphrases from unrelated pairs better (z = 8.4) than words alone (7.2).
//     A text without tokens maps to the zero vector.
//  6. Optional gloss group (GlossOptions, off by default; when off steps 1-5 are unchanged and so
//     is the fingerprint): each canonical token t adds the feature t (value idf(t)) and, with
//     value `related` * idf(r), every word r of its WordNet gloss neighbourhood
//     (WordNetGlosses::ForEachRelated over its first `senses` synsets per part of speech: synonyms,
//     definition words, hypernym and derivation lemmas), hashed by WordNetGlosses::Key; counted and
//     normalized like the other groups and added with weight `weight`. Two texts whose words
//     share no form but whose glosses overlap ("vehicle" / "drive": "operate or control a
//     vehicle") then have a positive cosine (a hashed first-order gloss vector, Patwardhan &
//     Pedersen 2006).
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"
#include "embed/wordnet_canonicalizer.h"
#include "embed/wordnet_glosses.h"

namespace bulwark {

// The gloss group of step 6. `glosses` null: the group is off.
struct GlossOptions {
  std::shared_ptr<const WordNetGlosses> glosses;
  float weight = 1.0f;   // group weight against unigrams' 1; > 0
  float related = 0.5f;  // a related word's value relative to its IDF; (0, 10]
  int senses = 1;        // synsets per part of speech; 1 .. WordNetGlosses::kMaxSenses
};

class LexicalEmbedder final : public Embedder {
 public:
  static constexpr int kDimension = 384;
  static constexpr std::string_view kAlgorithmVersion = "bulwark.lexical.v1";

  // Feature group weights (step 5).
  static constexpr float kUnigramWeight = 1.0f;
  static constexpr float kBigramWeight = 0.4f;
  static constexpr float kCharNgramWeight = 0.8f;
  // Bytes of a text that are embedded (step 1).
  static constexpr size_t kMaxTextBytes = 64 * 1024;
  // Character n-gram lengths in bytes, inclusive (step 4).
  static constexpr int kMinCharN = 3;
  static constexpr int kMaxCharN = 5;
  // XXH3-64 seeds of the feature groups (step 4). A bigram (a, b) is hashed as
  // XXH3_64bits_withSeed(b, kBigramSeed ^ XXH3_64bits_withSeed(a, kUnigramSeed)).
  static constexpr uint64_t kUnigramSeed = 0x62756c7761726b31;  // "bulwark1"
  static constexpr uint64_t kBigramSeed = 0x62756c7761726b32;   // "bulwark2"
  static constexpr uint64_t kCharSeed = 0x62756c7761726b33;     // "bulwark3"

  // Builds the embedder from its config {"kind": "lexical", "synonyms": bool (optional),
  // "wordnet_dir": string (optional, default `default_wordnet_dir`), "glosses": {"weight": w,
  // "related": r, "senses": n} (optional, step 6; each key optional, defaults GlossOptions')}. Synonyms are
  // on when "synonyms" is true, or when it is absent and the WordNet files exist; the WordNet data is loaded
  // once per process and directory (WordNetCanonicalizer::Shared). Errors:
  //   InvalidArgument     an unknown field, a non-boolean "synonyms", a non-string or empty
  //                       "wordnet_dir", "glosses" not an object, with an unknown key or a
  //                       value out of range, or "glosses" with "synonyms": false
  //   FailedPrecondition  synonyms requested ("synonyms": true, or a "wordnet_dir" without
  //                       "synonyms": false) but the files are missing or do not parse. With
  //                       neither key, missing files silently turn synonyms off, and the
  //                       fingerprint records that. "glosses" requires the WordNet files
  //                       (FailedPrecondition when they are missing).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LexicalEmbedder>> FromConfig(
      const nlohmann::json& config,
      const std::string& default_wordnet_dir = std::string(WordNetCanonicalizer::kDefaultDir));

  // `canonicalizer` null: no synonym canonicalization (step 2 skipped). A gloss group needs a
  // canonicalizer (it is ignored without one).
  explicit LexicalEmbedder(std::shared_ptr<const WordNetCanonicalizer> canonicalizer,
                           GlossOptions glosses = {});

  int dimension() const override { return kDimension; }

  // name "lexical", dimension 384, config_hash = SHA-256 hex of the canonical JSON
  // {"algorithm": kAlgorithmVersion, "dimension": 384, "synonyms": bool
  //  [, "wordnet_digest": WordNetCanonicalizer::data_digest() when synonyms are on]
  //  [, "glosses": {"weight", "related", "senses"} when the gloss group is on]}.
  EmbedderFingerprint Fingerprint() const override { return fingerprint_; }

  // Never fails: every byte string has an embedding. Thread-safe.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Embed(std::string_view text) const override;

  // Embed() writing into `out`, which must hold exactly kDimension floats. No heap allocation
  // once the calling thread has embedded a text at least as long (scratch memory for texts over
  // a few KiB is released after the call, not kept per thread).
  void EmbedInto(std::string_view text, std::span<float> out) const;

  // Steps 1-2 only: the tokens that features are built from (for tests and debugging).
  std::vector<std::string> Tokens(std::string_view text) const;

  bool synonyms() const { return canonicalizer_ != nullptr; }
  bool glosses() const { return glosses_.glosses != nullptr; }

 private:
  std::shared_ptr<const WordNetCanonicalizer> canonicalizer_;
  GlossOptions glosses_;
  EmbedderFingerprint fingerprint_;
};

}  // namespace bulwark
