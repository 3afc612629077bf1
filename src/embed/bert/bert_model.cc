// The BERT encoder's forward pass with Eigen (see bert_model.h for the equations).
#include "embed/bert/bert_model.h"

#include <absl/strings/str_cat.h>

#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>
#include <utility>

#include "embed/bert/linear.h"

namespace bulwark::bert {

BertModel::BertModel(BertConfig config, BertWeights weights)
    : config_(std::move(config)), weights_(std::move(weights)) {}

void BertModel::LayerNorm(const RowVector& gamma, const RowVector& beta, RowMatrix* x) const {
  const Eigen::VectorXf mean = x->rowwise().mean();
  x->colwise() -= mean;
  const Eigen::VectorXf inverse_std =
      ((x->rowwise().squaredNorm() / static_cast<float>(x->cols())).array() + config_.layer_norm_eps).rsqrt();
  x->array().colwise() *= inverse_std.array();
  x->array().rowwise() *= gamma.array();
  x->rowwise() += beta;
}

void BertModel::Layer(const BertLayerWeights& layer, RowMatrix* x) const {
  const Eigen::Index n = x->rows(), h = config_.hidden_size, d = config_.head_size();
  // Self-attention: one product for Q, K and V, then softmax(Q_h K_h^T / sqrt(d)) V_h per head.
  RowMatrix qkv;
  Linear(*x, layer.qkv_weight, layer.qkv_bias, &qkv);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  RowMatrix context(n, h), scores(n, n);
  for (int head = 0; head < config_.num_attention_heads; ++head) {
    scores.noalias() = qkv.middleCols(head * d, d) * qkv.middleCols(h + head * d, d).transpose();
    scores *= scale;
    scores.colwise() -= scores.rowwise().maxCoeff();
    scores = scores.array().exp();
    scores.array().colwise() /= scores.rowwise().sum().array();
    context.middleCols(head * d, d).noalias() = scores * qkv.middleCols(2 * h + head * d, d);
  }
  RowMatrix attention;
  Linear(context, layer.attention_output_weight, layer.attention_output_bias, &attention);
  *x += attention;
  LayerNorm(layer.attention_norm_gamma, layer.attention_norm_beta, x);

  // Feed-forward with exact GELU.
  RowMatrix inner;
  Linear(*x, layer.intermediate_weight, layer.intermediate_bias, &inner);
  inner.array() = 0.5f * inner.array() * (1.0f + (inner.array() * static_cast<float>(M_SQRT1_2)).erf());
  RowMatrix output;
  Linear(inner, layer.output_weight, layer.output_bias, &output);
  *x += output;
  LayerNorm(layer.output_norm_gamma, layer.output_norm_beta, x);
}

absl::StatusOr<std::vector<float>> BertModel::Embed(std::span<const int32_t> ids) const {
  const Eigen::Index n = static_cast<Eigen::Index>(ids.size());
  if (n == 0 || n > config_.max_position_embeddings) {
    return absl::InvalidArgumentError(
        absl::StrCat("bert: sequence of ", n, " tokens, need 1..", config_.max_position_embeddings));
  }
  RowMatrix x(n, config_.hidden_size);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= config_.vocab_size) {
      return absl::InvalidArgumentError(absl::StrCat("bert: token id ", ids[i], " outside the vocabulary"));
    }
    x.row(i) = weights_.word_embeddings.row(ids[i]) + weights_.position_embeddings.row(i) +
               weights_.token_type_embeddings.row(0);
  }
  LayerNorm(weights_.embedding_norm_gamma, weights_.embedding_norm_beta, &x);
  for (const BertLayerWeights& layer : weights_.layers) Layer(layer, &x);

  RowVector pooled = x.colwise().mean();  // masked mean pooling; the mask is all ones
  const float norm = pooled.norm();
  if (norm > 0 && std::isfinite(norm)) pooled /= norm;
  return std::vector<float>(pooled.data(), pooled.data() + pooled.size());
}

}  // namespace bulwark::bert
