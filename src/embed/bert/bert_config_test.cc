// Tests of config.json parsing and the sentence-transformers settings files: accepted values and
// the error for each missing, out-of-range or unsupported field.
#include "embed/bert/bert_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bulwark::bert {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

// all-MiniLM-L6-v2's config.json.
json MiniLmConfig() {
  return json::parse(R"({
    "_name_or_path": "nreimers/MiniLM-L6-H384-uncased", "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 384, "initializer_range": 0.02, "intermediate_size": 1536,
    "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
    "num_hidden_layers": 6, "pad_token_id": 0, "position_embedding_type": "absolute",
    "transformers_version": "4.8.2", "type_vocab_size": 2, "use_cache": true, "vocab_size": 30522})");
}

TEST(BertConfigTest, ParsesMiniLm) {
  absl::StatusOr<BertConfig> config = ParseBertConfig(MiniLmConfig().dump());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->hidden_size, 384);
  EXPECT_EQ(config->num_hidden_layers, 6);
  EXPECT_EQ(config->num_attention_heads, 12);
  EXPECT_EQ(config->head_size(), 32);
  EXPECT_EQ(config->intermediate_size, 1536);
  EXPECT_EQ(config->max_position_embeddings, 512);
  EXPECT_EQ(config->vocab_size, 30522);
  EXPECT_EQ(config->type_vocab_size, 2);
  EXPECT_FLOAT_EQ(config->layer_norm_eps, 1e-12f);
  // all-MiniLM-L6-v2 has 22.7 M parameters, of which the pooler (not loaded) is 0.15 M.
  EXPECT_EQ(config->ParameterCount(), 22713216 - 384 * 384 - 384);
}

TEST(BertConfigTest, RefusesBadFields) {
  const std::vector<std::pair<std::string, json>> changes = {
      {"hidden_size", 0},
      {"hidden_size", 5000},
      {"hidden_size", "384"},
      {"hidden_size", 385},  // not a multiple of the 12 heads
      {"num_hidden_layers", 0},
      {"num_attention_heads", -1},
      {"intermediate_size", 1e9},
      {"max_position_embeddings", 1},
      {"vocab_size", 2000000},
      {"type_vocab_size", 0},
      {"layer_norm_eps", 0},
      {"layer_norm_eps", "tiny"},
      {"hidden_act", "relu"},
      {"hidden_act", "gelu_new"},
      {"position_embedding_type", "relative_key"},
      {"model_type", "roberta"},
  };
  for (const auto& [key, value] : changes) {
    json config = MiniLmConfig();
    config[key] = value;
    absl::StatusOr<BertConfig> parsed = ParseBertConfig(config.dump());
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << key << " = " << value;
    EXPECT_THAT(parsed.status().message(), HasSubstr(key)) << key;
  }
  for (const char* key : {"hidden_size", "num_hidden_layers", "vocab_size", "hidden_act"}) {
    json config = MiniLmConfig();
    config.erase(key);
    EXPECT_EQ(ParseBertConfig(config.dump()).status().code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_EQ(ParseBertConfig("not json").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseBertConfig("[1]").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SentenceSettingsTest, DefaultsAndFiles) {
  BertConfig config = *ParseBertConfig(MiniLmConfig().dump());
  absl::StatusOr<SentenceSettings> defaults = ParseSentenceSettings("", "", "", config);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->max_seq_length, 256);
  EXPECT_TRUE(defaults->do_lower_case);

  absl::StatusOr<SentenceSettings> minilm = ParseSentenceSettings(
      R"({"max_seq_length": 128, "do_lower_case": false})",
      R"({"do_lower_case": false, "strip_accents": null})",
      R"({"word_embedding_dimension": 384, "pooling_mode_cls_token": false, "pooling_mode_mean_tokens": true,
          "pooling_mode_max_tokens": false, "pooling_mode_mean_sqrt_len_tokens": false})",
      config);
  ASSERT_TRUE(minilm.ok()) << minilm.status();
  EXPECT_EQ(minilm->max_seq_length, 128);
  EXPECT_FALSE(minilm->do_lower_case);

  config.max_position_embeddings = 64;  // the default 256 is capped by the position table
  EXPECT_EQ(ParseSentenceSettings("", "", "", config)->max_seq_length, 64);
}

TEST(SentenceSettingsTest, RefusesBadOrUnsupportedSettings) {
  const BertConfig config = *ParseBertConfig(MiniLmConfig().dump());
  auto code = [&](std::string_view s, std::string_view t, std::string_view p) {
    return ParseSentenceSettings(s, t, p, config).status().code();
  };
  EXPECT_EQ(code(R"({"max_seq_length": 513})", "", ""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code(R"({"max_seq_length": 1})", "", ""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("{", "", ""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("", R"({"do_lower_case": "yes"})", ""), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("", R"({"do_lower_case": true, "strip_accents": false})", ""),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code("", R"({"tokenize_chinese_chars": false})", ""), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code("", "", R"({"pooling_mode_cls_token": true})"), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(code("", "", R"({"pooling_mode_mean_tokens": true, "pooling_mode_max_tokens": true})"),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace bulwark::bert
