// BigramLm: an interpolated Kneser-Ney bigram language model over lowercase word tokens, the
// readability scorer of the lexical pot-text realiser (research/mempot.md 2.3: MemPot Eq. 13's
// readable(y) without an LLM). Trained on the glosses and example sentences of Princeton WordNet
// 3.0 (Debian `wordnet-base`: data.{noun,verb,adj,adv}), or on any sentences for tests.
//
//   P(w | v) = max(c(v w) - D, 0) / c(v .) + D N1+(v .) / c(v .) * Pc(w)     (c(v .) > 0)
//   P(w | v) = Pc(w)                                                          (otherwise)
//   Pc(w)    = (N1+(. w) + 1/2) / (N1+(. .) + (V + 1) / 2)    (continuation; an unseen word is
//                                                              the (V+1)-th type)
//   D        = n1 / (n1 + 2 n2)   (n_r: bigram types seen r times; Chen & Goodman 1998)
// Sentences are padded with <s> and </s>. Tokens are the maximal runs of [a-z0-9] after ASCII
// lowercasing, as the lexical embedder cuts them (without its synonym step).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"

namespace bulwark::honeypot {

class BigramLm {
 public:
  static constexpr int kBegin = 0;  // <s>
  static constexpr int kEnd = 1;    // </s>
  static constexpr int kUnknown = -1;

  // Trains on `sentences`. InvalidArgument if they hold no token.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BigramLm>> Train(
      std::span<const std::string> sentences);

  // Trains on the WordNet glosses and examples under `dir` (each gloss split at ';' into a
  // definition and its quoted examples; every piece is one sentence). About 2 s. Errors:
  // NotFound for a missing data file, ResourceExhausted for one over 256 MiB, DataLoss if a file
  // has no gloss at all.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BigramLm>> TrainOnWordNet(const std::string& dir);
  // TrainOnWordNet(dir) trained on the first call for `dir` and shared by later callers (a
  // process that fits several times, the evaluations and tests, trains once). Thread-safe;
  // failures are not cached.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const BigramLm>> SharedWordNet(const std::string& dir);

  // The WordNet sentences TrainOnWordNet would use (for tests and other consumers).
  [[nodiscard]] static absl::StatusOr<std::vector<std::string>> WordNetSentences(const std::string& dir);

  // The id of a token (>= 2), kBegin/kEnd for "<s>"/"</s>", or kUnknown.
  int Id(std::string_view token) const;
  const std::string& Token(int id) const { return tokens_[static_cast<size_t>(id)]; }
  // How often the token occurred in training (0 if unknown).
  uint32_t Count(std::string_view token) const;

  // ln P(word | prev) by ids (kUnknown allowed for both).
  double LogProb(int prev, int word) const;
  // The mean ln P over the transitions <s> w1 ... wn </s> (n + 1 of them). 0 for no words.
  double MeanLogProb(std::span<const std::string_view> words) const;

  size_t vocabulary_size() const { return tokens_.size() - 2; }
  uint64_t token_count() const { return token_count_; }
  uint64_t sentence_count() const { return sentence_count_; }
  double discount() const { return discount_; }
  // Calls fn(token, count) for every token except <s> and </s>, in id order (first appearance).
  template <typename Fn>
  void ForEachToken(Fn&& fn) const {
    for (size_t i = 2; i < tokens_.size(); ++i) fn(std::string_view(tokens_[i]), unigram_[i]);
  }

  // Tokenization used for training and scoring: lowercase [a-z0-9]+ runs.
  static std::vector<std::string> Tokenize(std::string_view text);

 private:
  BigramLm() = default;
  int Intern(std::string_view token);
  void Finish();
  static uint64_t Pair(int a, int b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::vector<std::string> tokens_;
  absl::flat_hash_map<std::string, int, StringViewHash, StringViewEq> ids_;
  std::vector<uint32_t> unigram_;       // occurrences
  std::vector<uint32_t> history_;       // c(v .): bigrams starting with v
  std::vector<uint32_t> followers_;     // N1+(v .)
  std::vector<uint32_t> continuation_;  // N1+(. w)
  absl::flat_hash_map<uint64_t, uint32_t> bigrams_;
  uint64_t bigram_types_ = 0;  // N1+(. .)
  uint64_t token_count_ = 0;
  uint64_t sentence_count_ = 0;
  double discount_ = 0.75;
};

}  // namespace bulwark::honeypot
