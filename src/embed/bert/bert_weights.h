// BertWeights: the float32 parameters of a BERT encoder, taken from a checked safetensors file by
// the tensor names Hugging Face's BertModel uses (with or without a "bert." prefix):
//   embeddings.{word,position,token_type}_embeddings.weight, embeddings.LayerNorm.{weight,bias}
//   encoder.layer.N.attention.self.{query,key,value}.{weight,bias}
//   encoder.layer.N.attention.output.dense.{weight,bias}, ...attention.output.LayerNorm.*
//   encoder.layer.N.intermediate.dense.{weight,bias}
//   encoder.layer.N.output.dense.{weight,bias}, encoder.layer.N.output.LayerNorm.*
// (LayerNorm parameters may also be named gamma/beta, as in converted TF checkpoints). Linear
// weights are [out, in], as PyTorch stores them. Other tensors (the pooler, position_ids) are
// ignored. Tensors may be F32, F16 or BF16; they are converted to F32.
#pragma once

#include <absl/status/statusor.h>

#include <Eigen/Core>
#include <vector>

#include "embed/bert/bert_config.h"
#include "embed/bert/safetensors.h"

namespace bulwark::bert {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::RowVectorXf;

struct BertLayerWeights {
  RowMatrix qkv_weight;               // [3H, H]: query, key and value weights stacked, for one product
  RowVector qkv_bias;                 // [3H]
  RowMatrix attention_output_weight;  // [H, H]
  RowVector attention_output_bias;    // [H]
  RowVector attention_norm_gamma, attention_norm_beta;  // [H]
  RowMatrix intermediate_weight;                        // [I, H]
  RowVector intermediate_bias;                          // [I]
  RowMatrix output_weight;                              // [H, I]
  RowVector output_bias;                                // [H]
  RowVector output_norm_gamma, output_norm_beta;        // [H]
};

struct BertWeights {
  RowMatrix word_embeddings;                            // [vocab_size, H]
  RowMatrix position_embeddings;                        // [max_position_embeddings, H]
  RowMatrix token_type_embeddings;                      // [type_vocab_size, H]; every token has type 0
  RowVector embedding_norm_gamma, embedding_norm_beta;  // [H]
  std::vector<BertLayerWeights> layers;                 // num_hidden_layers
};

// Finds every tensor the encoder needs, checks its shape against `config` before allocating, and
// converts it to F32. Errors: FailedPrecondition naming a missing tensor, a tensor whose shape
// differs from what config.json implies, or one whose dtype is not F32/F16/BF16.
[[nodiscard]] absl::StatusOr<BertWeights> LoadBertWeights(const SafetensorsFile& file,
                                                          const BertConfig& config);

}  // namespace bulwark::bert
