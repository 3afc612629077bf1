// Stage 2 of MemPot without an LLM: turns a honeypot vector e_p into text whose embedding is close
// to it ("safety embedding inversion", MemPot Sec. 4.2, Eq. 13-16, Alg. 1), using only public
// words (research/mempot.md 2.3, the lexical route):
//   1. Pool: the `pool_size` vocabulary words w with the highest cos(E(w), e_p), plus the words
//      of the safety content S that are in the vocabulary. The vocabulary is public (by default
//      the WordNet gloss words that are WordNet lemma forms); no memory text ever enters it.
//   2. Matching pursuit: greedily add the pool word that most increases cos(E(bag), e_p), as long
//      as the bag stays below the privacy bound (minus a margin) against the `privacy_neighbours`
//      memories nearest e_p; stop at `max_words` words or a gain below `min_gain`.
//   3. Ordering: a beam search (width b, the top-m next words per beam by the bigram LM) over
//      orderings of the bag with function words in between (never two in a row), ranked by the
//      mean bigram log-probability: Alg. 1 with the Kneser-Ney bigram LM as the language model.
//   4. Scoring (Eq. 16 with lexical stand-ins):
//        R = w_emb cos(E(y), e_p) + w_read readable(y) + w_ent Entail(y|S) - w_priv max_j cos(E(y), e_j)
//      readable(y) = clamp((mean ln P + 12) / 8, 0, 1) - 1 in [-1, 0] (a mean of -4 nats, fluent
//      gloss text, maps to 0; -12, word salad, to -1); Entail(y|S) = the fraction of y's content
//      words that occur in S (0 without S), a lexical stand-in for NLI; the privacy term over the
//      nearest memories. The candidates (the finished beams and the plain bag order) are tried
//      best R first, and the first one to pass every PotTextGate check is returned.
// Deterministic: no randomness, ties broken by index.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bulwark/embedder.h"
#include "embed/wordnet_canonicalizer.h"
#include "honeypot/bigram_lm.h"
#include "honeypot/pot_math.h"
#include "honeypot/pot_text_gate.h"

namespace bulwark::honeypot {

struct LexicalRealizerOptions {
  int pool_size = 64;       // candidate words per pot, 1 .. 4096
  int max_words = 16;       // L: content words per pot text, 1 .. 32
  double min_gain = 0.002;  // stop matching pursuit below this cosine gain, >= 0
  int beam_width = 10;      // b of Alg. 1, 1 .. 256
  int expansions = 10;      // top-m next words per beam, 1 .. 256
  double weight_embedding = 1.0;
  double weight_readable = 0.5;
  double weight_entail = 0.5;
  double weight_privacy = 1.0;
  int privacy_neighbours = 64;   // memories nearest e_p watched during the search, >= 1
  double privacy_margin = 0.02;  // matching pursuit keeps the local maximum below bound - margin
};

struct RealizedPot {
  bool passed = false;           // a candidate passed every gate
  std::string rejection;         // why the best candidate failed (when !passed)
  std::string text;              // the chosen (or, when !passed, best failing) candidate
  std::vector<float> embedding;  // E(text)
  double target_cos = 0;         // cos(E(text), e_p); the inversion gap is 1 - target_cos
  double privacy_max = 0;        // max over all memories of cos(E(text), e_j)
  double readable = 0;
  double entail = 0;
  double score = 0;  // R
  int words = 0;     // content words (the matching-pursuit bag)
};

class LexicalRealizer {
 public:
  // Words of `lm` seen at least `min_count` times, of 3 or more letters [a-z], not stopwords,
  // and, when `wordnet` is given, base forms of some WordNet lemma. In LM id order.
  static std::vector<std::string> DefaultVocabulary(const BigramLm& lm, const WordNetCanonicalizer* wordnet,
                                                    uint32_t min_count = 5);

  // Embeds `vocabulary` with `embedder` once. `embedder` must outlive the realiser. Errors:
  // InvalidArgument for an empty vocabulary, a word with no features (zero vector) only being
  // dropped, options out of range; the embedder's errors.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LexicalRealizer>> Create(
      const Embedder& embedder, std::shared_ptr<const BigramLm> lm, std::vector<std::string> vocabulary,
      const LexicalRealizerOptions& options = {});

  // Realises one pot vector `target` (dimension d, unit norm) against `gate`'s memories with
  // optional safety content S. A pot no candidate of which passes the gates is a value with
  // passed = false, not an error. Errors: InvalidArgument for a wrong dimension; the embedder's
  // errors. Thread-safe.
  [[nodiscard]] absl::StatusOr<RealizedPot> Realize(std::span<const float> target, const PotTextGate& gate,
                                                    std::string_view safety_content = "") const;

  // The matching-pursuit bag for `target` (steps 1-2): the words a rewriting LLM should use, in
  // the order they were chosen. Same errors as Realize.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> KeyWords(std::span<const float> target,
                                                                  const PotTextGate& gate,
                                                                  std::string_view safety_content = "") const;

  // Scores a given text exactly as Realize scores its own candidates (R of step 4) and runs the
  // gates; `passed` and `rejection` report the gates. Same errors as Realize.
  [[nodiscard]] absl::StatusOr<RealizedPot> Evaluate(std::string_view text, std::span<const float> target,
                                                     const PotTextGate& gate,
                                                     std::string_view safety_content = "") const;

  size_t vocabulary_size() const { return words_.size(); }
  const LexicalRealizerOptions& options() const { return options_; }

 private:
  struct Context;
  LexicalRealizer(const Embedder& embedder, std::shared_ptr<const BigramLm> lm,
                  const LexicalRealizerOptions& options)
      : embedder_(embedder), lm_(std::move(lm)), options_(options) {}
  absl::StatusOr<Context> MakeContext(std::span<const float> target, const PotTextGate& gate,
                                      std::string_view safety_content) const;
  absl::StatusOr<std::vector<int>> MatchingPursuit(const Context& ctx) const;
  std::vector<std::vector<std::string_view>> OrderByLm(const std::vector<int>& bag) const;
  absl::Status ScoreCandidate(const Context& ctx, const std::vector<std::string_view>& words,
                              std::string text, RealizedPot* out) const;

  const Embedder& embedder_;
  std::shared_ptr<const BigramLm> lm_;
  LexicalRealizerOptions options_;
  std::vector<std::string> words_;
  RowMatrixXf embeddings_;  // one unit row per word
};

}  // namespace bulwark::honeypot
