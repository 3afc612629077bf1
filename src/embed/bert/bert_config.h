// BertConfig: the architecture of a BERT encoder as read from a Hugging Face `config.json`, and
// the sentence-transformers settings around it (`sentence_bert_config.json`,
// `tokenizer_config.json`, `1_Pooling/config.json`). Every number is range-checked here, before
// any weight is allocated from it; BertWeights then checks the tensors' shapes against it.
#pragma once

#include <absl/status/statusor.h>

#include <string_view>

namespace bulwark::bert {

struct BertConfig {
  int hidden_size = 0;              // H, 1..4096, a multiple of num_attention_heads
  int num_hidden_layers = 0;        // 1..64
  int num_attention_heads = 0;      // 1..H
  int intermediate_size = 0;        // 1..16384
  int max_position_embeddings = 0;  // 2..8192
  int vocab_size = 0;               // 1..1000000
  int type_vocab_size = 0;          // 1..16
  float layer_norm_eps = 1e-12f;    // (0, 0.1]
  // hidden_act must be "gelu" (exact, erf-based); position_embedding_type "absolute" if present;
  // model_type "bert" if present.

  int head_size() const { return hidden_size / num_attention_heads; }

  // Number of float parameters the encoder needs (embeddings + layers, no pooler), for a memory
  // bound before loading.
  int64_t ParameterCount() const;
};

// Parses and checks the text of a config.json. Errors: InvalidArgument naming the field that is
// missing, mistyped, out of range or unsupported (an activation other than "gelu", relative
// position embeddings, another model_type), or for text that is not a JSON object.
[[nodiscard]] absl::StatusOr<BertConfig> ParseBertConfig(std::string_view json_text);

// The sentence-transformers settings that change the vectors.
struct SentenceSettings {
  int max_seq_length = 256;   // tokens per text including [CLS] and [SEP]
  bool do_lower_case = true;  // lowercase and strip accents (uncased BERT)
};

// Folds in the optional sentence-transformers files, each given as its text (empty = absent):
//   sentence_bert_config.json  {"max_seq_length": n, ...}: 2..max_position_embeddings
//   tokenizer_config.json      {"do_lower_case": bool, ...}; a "strip_accents" that is not null
//                              must equal do_lower_case, and "tokenize_chinese_chars" must not be
//                              false (the only combinations implemented)
//   1_Pooling/config.json      must select mean pooling ("pooling_mode_mean_tokens": true and no
//                              other pooling_mode_* true)
// Errors: InvalidArgument naming the file and field; FailedPrecondition for a pooling mode or
// accent setting this embedder does not implement.
[[nodiscard]] absl::StatusOr<SentenceSettings> ParseSentenceSettings(std::string_view sentence_bert_config,
                                                                     std::string_view tokenizer_config,
                                                                     std::string_view pooling_config,
                                                                     const BertConfig& config);

}  // namespace bulwark::bert
