// BertEmbedder: the native transformer embedder (DESIGN.md 4.3, `bert`). It loads a
// sentence-transformers model directory of the all-MiniLM-L6-v2 shape and embeds texts locally:
//   <dir>/model.safetensors           BERT encoder weights (F32, F16 or BF16), required
//   <dir>/config.json                 the encoder's architecture, required
//   <dir>/vocab.txt                   WordPiece vocabulary, required
//   <dir>/sentence_bert_config.json   max_seq_length (default 256), optional
//   <dir>/tokenizer_config.json       do_lower_case (default true), optional
//   <dir>/1_Pooling/config.json       must say mean pooling if present, optional
// text -> BertTokenizer ([CLS] pieces [SEP], truncated to max_seq_length) -> BertModel (post-LN
// encoder, masked mean pooling, L2 normalisation). No weights are ever downloaded.
//
// Every file is read with a size limit and checked before anything is allocated from it: the
// safetensors header and tensor table (safetensors.h), config.json's ranges (bert_config.h), the
// tensors' shapes against config.json (bert_weights.h), the vocabulary against vocab_size.
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
#include "embed/bert/bert_model.h"
#include "embed/bert/bert_tokenizer.h"

namespace bulwark {

struct BertEmbedderOptions {
  // The model directory. Required.
  std::string path;
  // Tokens per text including [CLS] and [SEP]; longer texts are truncated. 0 (default): take it
  // from sentence_bert_config.json, else 256; in any case at most max_position_embeddings.
  int max_seq_length = 0;
  // Threads EmbedBatch spreads texts over, 1..256. 0 (default): one per hardware thread. Does not
  // change the vectors, so it is not part of the fingerprint.
  int threads = 0;
  // Largest model.safetensors accepted, in bytes. Default 2 GiB (all-MiniLM-L6-v2: 91 MB).
  uint64_t max_model_bytes = uint64_t{2} << 30;
};

class BertEmbedder final : public Embedder {
 public:
  static constexpr std::string_view kAlgorithmVersion = "bulwark.bert.v1";

  // Loads and checks the model directory. Errors:
  //   InvalidArgument     bad options; config.json, vocab.txt or a settings file malformed or out
  //                       of range
  //   NotFound            a required file is missing
  //   FailedPrecondition  a file over its size limit; a model this embedder does not implement
  //                       (activation, pooling, accents); a tensor missing or of the wrong shape
  //                       or dtype
  //   DataLoss            model.safetensors is corrupt (safetensors.h lists the checks)
  //   Unavailable         a read error
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BertEmbedder>> Load(BertEmbedderOptions options);

  // From an embedder config {"kind": "bert", "path": dir, optional "max_seq_length", "threads",
  // "max_model_mb"}, then Load(). Errors: InvalidArgument for a missing, mistyped, out-of-range or
  // unknown field; otherwise Load()'s.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BertEmbedder>> FromConfig(const nlohmann::json& config);

  int dimension() const override { return model_.config().hidden_size; }

  // name "bert", dimension hidden_size, config_hash = SHA-256 hex of the canonical JSON
  // {"algorithm": kAlgorithmVersion, "config_sha256", "do_lower_case", "max_seq_length",
  //  "model_sha256", "vocab_sha256"}: the hashes are of config.json, model.safetensors and
  // vocab.txt as read.
  EmbedderFingerprint Fingerprint() const override { return fingerprint_; }

  // Never fails for a loaded model (every byte string tokenizes; invalid UTF-8 is dropped).
  // Thread-safe.
  [[nodiscard]] absl::StatusOr<std::vector<float>> Embed(std::string_view text) const override;

  // Embeds the texts on up to `threads` threads, each text on one thread; result i belongs to
  // texts[i]. Thread-safe.
  [[nodiscard]] absl::StatusOr<std::vector<std::vector<float>>> EmbedBatch(
      std::span<const std::string> texts) const override;

  // The token ids Embed() runs the encoder on (for tests and debugging).
  std::vector<int32_t> TokenIds(std::string_view text) const;
  const bert::BertTokenizer& tokenizer() const { return tokenizer_; }
  int max_seq_length() const { return max_seq_length_; }

 private:
  BertEmbedder(bert::BertTokenizer tokenizer, bert::BertModel model, int max_seq_length, int threads,
               EmbedderFingerprint fingerprint);

  bert::BertTokenizer tokenizer_;
  bert::BertModel model_;
  int max_seq_length_;
  int threads_;
  EmbedderFingerprint fingerprint_;
};

}  // namespace bulwark
