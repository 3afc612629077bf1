// BertModel: the forward pass of a post-LN BERT encoder followed by masked mean pooling and L2
// normalisation, i.e. what sentence-transformers computes for an all-MiniLM-L6-v2-shaped model
// (Devlin et al. 2019; Vaswani et al. 2017 for the attention; Reimers & Gurevych 2019 for the
// pooling). For token ids t_1..t_n (n <= max_position_embeddings):
//   x_i   = LN(E_word[t_i] + E_pos[i] + E_type[0])
//   per layer:  Q, K, V = x W_q^T + b_q, ...;  per head h: A_h = softmax(Q_h K_h^T / sqrt(d)) V_h
//               x = LN(x + concat_h(A_h) W_o^T + b_o)
//               x = LN(x + GELU(x W_i^T + b_i) W_2^T + b_2),  GELU(z) = z/2 (1 + erf(z / sqrt 2))
//   e = mean_i x_i,  result e / ||e||
// A text is run alone, unpadded, so its attention mask is all ones and the mean pooling over
// unmasked tokens is a plain mean: the same numbers as a padded batch with a mask.
//
// The dense layers use Linear (linear.h: a hand AVX2+FMA kernel when the CPU has it, else Eigen);
// attention and normalisation use Eigen. One text runs on one thread; BertEmbedder runs texts in
// parallel.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <span>
#include <vector>

#include "embed/bert/bert_config.h"
#include "embed/bert/bert_weights.h"

namespace bulwark::bert {

class BertModel {
 public:
  // `weights` must have the shapes `config` implies (LoadBertWeights guarantees it).
  BertModel(BertConfig config, BertWeights weights);

  const BertConfig& config() const { return config_; }

  // The pooled, L2-normalised embedding (hidden_size floats) of `ids`. Thread-safe.
  // Errors: InvalidArgument for an empty sequence, one longer than max_position_embeddings, or an
  // id outside [0, vocab_size).
  [[nodiscard]] absl::StatusOr<std::vector<float>> Embed(std::span<const int32_t> ids) const;

 private:
  // x <- LN(x) row by row with the given gamma and beta.
  void LayerNorm(const RowVector& gamma, const RowVector& beta, RowMatrix* x) const;
  // One encoder layer applied to x in place.
  void Layer(const BertLayerWeights& layer, RowMatrix* x) const;

  BertConfig config_;
  BertWeights weights_;
};

}  // namespace bulwark::bert
