// Name lookup, shape checks and F32 conversion of BERT encoder tensors (see bert_weights.h).
#include "embed/bert/bert_weights.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <string>

#include "core/status_macros.h"

namespace bulwark::bert {
namespace {

class TensorReader {
 public:
  TensorReader(const SafetensorsFile& file, std::string prefix) : file_(file), prefix_(std::move(prefix)) {}

  // Reads the tensor `name` of shape [rows, cols] (cols < 0: a vector of `rows`) into `out`.
  absl::Status Read(const std::string& name, int64_t rows, int64_t cols, float* out) const {
    const SafetensorsTensor* tensor = file_.Find(prefix_ + name);
    if (tensor == nullptr) return Fail(name, "is missing");
    const std::vector<int64_t> expected =
        cols < 0 ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, cols};
    if (tensor->shape != expected) {
      return Fail(name, absl::StrCat("has shape [", absl::StrJoin(tensor->shape, ", "),
                                     "], config.json implies [", absl::StrJoin(expected, ", "), "]"));
    }
    const size_t count = static_cast<size_t>(rows * (cols < 0 ? 1 : cols));
    if (absl::Status s = TensorToFloat(*tensor, std::span<float>(out, count)); !s.ok()) {
      return Fail(name, s.message());
    }
    return absl::OkStatus();
  }

  absl::Status ReadMatrix(const std::string& name, int64_t rows, int64_t cols, RowMatrix* out) const {
    if (const SafetensorsTensor* t = file_.Find(prefix_ + name);
        t == nullptr || t->elements() != rows * cols) {
      return Read(name, rows, cols, nullptr);  // fails with the precise reason, before allocating
    }
    out->resize(rows, cols);
    return Read(name, rows, cols, out->data());
  }

  absl::Status ReadVector(const std::string& name, int64_t size, RowVector* out) const {
    if (const SafetensorsTensor* t = file_.Find(prefix_ + name); t == nullptr || t->elements() != size) {
      return Read(name, size, -1, nullptr);
    }
    out->resize(size);
    return Read(name, size, -1, out->data());
  }

  // A LayerNorm's parameters: "<base>.weight"/".bias", or the older "<base>.gamma"/".beta".
  absl::Status ReadNorm(const std::string& base, int64_t size, RowVector* gamma, RowVector* beta) const {
    const bool old =
        file_.Find(prefix_ + base + ".weight") == nullptr && file_.Find(prefix_ + base + ".gamma");
    BULWARK_RETURN_IF_ERROR(ReadVector(base + (old ? ".gamma" : ".weight"), size, gamma));
    return ReadVector(base + (old ? ".beta" : ".bias"), size, beta);
  }

 private:
  absl::Status Fail(const std::string& name, absl::string_view what) const {
    return absl::FailedPreconditionError(
        absl::StrCat("bert: model.safetensors: tensor \"", prefix_, name, "\" ", what));
  }

  const SafetensorsFile& file_;
  std::string prefix_;
};

absl::Status LoadLayer(const TensorReader& reader, const BertConfig& config, int index,
                       BertLayerWeights* layer) {
  const int64_t h = config.hidden_size, inter = config.intermediate_size;
  const std::string base = absl::StrCat("encoder.layer.", index, ".");
  RowMatrix qkv[3];
  RowVector qkv_bias[3];
  const char* parts[] = {"query", "key", "value"};
  for (int p = 0; p < 3; ++p) {
    const std::string name = absl::StrCat(base, "attention.self.", parts[p]);
    BULWARK_RETURN_IF_ERROR(reader.ReadMatrix(name + ".weight", h, h, &qkv[p]));
    BULWARK_RETURN_IF_ERROR(reader.ReadVector(name + ".bias", h, &qkv_bias[p]));
  }
  layer->qkv_weight.resize(3 * h, h);
  layer->qkv_weight << qkv[0], qkv[1], qkv[2];
  layer->qkv_bias.resize(3 * h);
  layer->qkv_bias << qkv_bias[0], qkv_bias[1], qkv_bias[2];
  for (absl::Status s : {
           reader.ReadMatrix(base + "attention.output.dense.weight", h, h, &layer->attention_output_weight),
           reader.ReadVector(base + "attention.output.dense.bias", h, &layer->attention_output_bias),
           reader.ReadNorm(base + "attention.output.LayerNorm", h, &layer->attention_norm_gamma,
                           &layer->attention_norm_beta),
           reader.ReadMatrix(base + "intermediate.dense.weight", inter, h, &layer->intermediate_weight),
           reader.ReadVector(base + "intermediate.dense.bias", inter, &layer->intermediate_bias),
           reader.ReadMatrix(base + "output.dense.weight", h, inter, &layer->output_weight),
           reader.ReadVector(base + "output.dense.bias", h, &layer->output_bias),
           reader.ReadNorm(base + "output.LayerNorm", h, &layer->output_norm_gamma, &layer->output_norm_beta),
       }) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BertWeights> LoadBertWeights(const SafetensorsFile& file, const BertConfig& config) {
  const bool prefixed = file.Find("embeddings.word_embeddings.weight") == nullptr &&
                        file.Find("bert.embeddings.word_embeddings.weight") != nullptr;
  const TensorReader reader(file, prefixed ? "bert." : "");
  const int64_t h = config.hidden_size;
  BertWeights weights;
  for (absl::Status s : {
           reader.ReadMatrix("embeddings.word_embeddings.weight", config.vocab_size, h,
                             &weights.word_embeddings),
           reader.ReadMatrix("embeddings.position_embeddings.weight", config.max_position_embeddings, h,
                             &weights.position_embeddings),
           reader.ReadMatrix("embeddings.token_type_embeddings.weight", config.type_vocab_size, h,
                             &weights.token_type_embeddings),
           reader.ReadNorm("embeddings.LayerNorm", h, &weights.embedding_norm_gamma,
                           &weights.embedding_norm_beta),
       }) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  weights.layers.resize(config.num_hidden_layers);
  for (int i = 0; i < config.num_hidden_layers; ++i) {
    BULWARK_RETURN_IF_ERROR(LoadLayer(reader, config, i, &weights.layers[i]));
  }
  return weights;
}

}  // namespace bulwark::bert
