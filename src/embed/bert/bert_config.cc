// Parsing and range checks of BERT's config.json and the sentence-transformers settings files.
#include "embed/bert/bert_config.h"

#include <absl/strings/str_cat.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "core/status_macros.h"

namespace bulwark::bert {
namespace {

using json = nlohmann::json;

absl::Status Bad(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("bert: ", file, ": ", what));
}

absl::StatusOr<json> ParseObject(absl::string_view file, std::string_view text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return Bad(file, "not a JSON object");
  return parsed;
}

// Reads the required integer `key` in [lo, hi] into `out`.
absl::Status ReadInt(const json& object, const char* key, int lo, int hi, int* out) {
  auto it = object.find(key);
  if (it == object.end()) return Bad("config.json", absl::StrCat("\"", key, "\" is required"));
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi) {
    return Bad("config.json", absl::StrCat("\"", key, "\" must be an integer in [", lo, ", ", hi, "]"));
  }
  *out = static_cast<int>(it->get<int64_t>());
  return absl::OkStatus();
}

// Checks that the optional string `key` is absent, null or `expected`.
absl::Status ExpectString(const json& object, const char* key, absl::string_view expected) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string() || it->get_ref<const std::string&>() != expected) {
    return Bad("config.json",
               absl::StrCat("\"", key, "\" must be \"", expected, "\" (the only one supported)"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t BertConfig::ParameterCount() const {
  const int64_t h = hidden_size, i = intermediate_size;
  const int64_t embeddings = (int64_t{vocab_size} + max_position_embeddings + type_vocab_size + 2) * h;
  const int64_t layer = 4 * (h * h + h) + 2 * h * i + i + h + 4 * h;
  return embeddings + num_hidden_layers * layer;
}

absl::StatusOr<BertConfig> ParseBertConfig(std::string_view json_text) {
  BULWARK_ASSIGN_OR_RETURN(json object, ParseObject("config.json", json_text));
  BertConfig c;
  for (absl::Status s : {ReadInt(object, "hidden_size", 1, 4096, &c.hidden_size),
                         ReadInt(object, "num_hidden_layers", 1, 64, &c.num_hidden_layers),
                         ReadInt(object, "num_attention_heads", 1, 4096, &c.num_attention_heads),
                         ReadInt(object, "intermediate_size", 1, 16384, &c.intermediate_size),
                         ReadInt(object, "max_position_embeddings", 2, 8192, &c.max_position_embeddings),
                         ReadInt(object, "vocab_size", 1, 1000000, &c.vocab_size),
                         ReadInt(object, "type_vocab_size", 1, 16, &c.type_vocab_size),
                         ExpectString(object, "position_embedding_type", "absolute"),
                         ExpectString(object, "model_type", "bert")}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  if (c.hidden_size % c.num_attention_heads != 0) {
    return Bad("config.json", "\"hidden_size\" must be a multiple of \"num_attention_heads\"");
  }
  auto act = object.find("hidden_act");
  if (act == object.end() || !act->is_string() || act->get_ref<const std::string&>() != "gelu") {
    return Bad("config.json", "\"hidden_act\" must be \"gelu\" (exact GELU, the only activation supported)");
  }
  auto eps = object.find("layer_norm_eps");
  if (eps != object.end()) {
    if (!eps->is_number() || !(eps->get<double>() > 0) || eps->get<double>() > 0.1) {
      return Bad("config.json", "\"layer_norm_eps\" must be a number in (0, 0.1]");
    }
    c.layer_norm_eps = static_cast<float>(eps->get<double>());
  }
  return c;
}

absl::StatusOr<SentenceSettings> ParseSentenceSettings(std::string_view sentence_bert_config,
                                                       std::string_view tokenizer_config,
                                                       std::string_view pooling_config,
                                                       const BertConfig& config) {
  SentenceSettings settings;
  settings.max_seq_length = std::min(settings.max_seq_length, config.max_position_embeddings);
  if (!sentence_bert_config.empty()) {
    BULWARK_ASSIGN_OR_RETURN(json object, ParseObject("sentence_bert_config.json", sentence_bert_config));
    if (auto it = object.find("max_seq_length"); it != object.end() && !it->is_null()) {
      if (!it->is_number_integer() || it->get<int64_t>() < 2 ||
          it->get<int64_t>() > config.max_position_embeddings) {
        return Bad("sentence_bert_config.json",
                   absl::StrCat("\"max_seq_length\" must be an integer in [2, ",
                                config.max_position_embeddings, "] (max_position_embeddings)"));
      }
      settings.max_seq_length = static_cast<int>(it->get<int64_t>());
    }
  }
  if (!tokenizer_config.empty()) {
    BULWARK_ASSIGN_OR_RETURN(json object, ParseObject("tokenizer_config.json", tokenizer_config));
    if (auto it = object.find("do_lower_case"); it != object.end()) {
      if (!it->is_boolean()) return Bad("tokenizer_config.json", "\"do_lower_case\" must be true or false");
      settings.do_lower_case = it->get<bool>();
    }
    if (auto it = object.find("tokenize_chinese_chars");
        it != object.end() && it->is_boolean() && !it->get<bool>()) {
      return absl::FailedPreconditionError(
          "bert: tokenizer_config.json: \"tokenize_chinese_chars\": false is not supported");
    }
    if (auto it = object.find("strip_accents"); it != object.end() && !it->is_null()) {
      if (!it->is_boolean() || it->get<bool>() != settings.do_lower_case) {
        return absl::FailedPreconditionError(
            "bert: tokenizer_config.json: \"strip_accents\" different from \"do_lower_case\" is not "
            "supported");
      }
    }
  }
  if (!pooling_config.empty()) {
    BULWARK_ASSIGN_OR_RETURN(json object, ParseObject("1_Pooling/config.json", pooling_config));
    bool mean = false, other = false;
    for (const auto& [key, value] : object.items()) {
      if (key.rfind("pooling_mode_", 0) != 0 || !value.is_boolean()) continue;
      (key == "pooling_mode_mean_tokens" ? mean : other) |= value.get<bool>();
    }
    if (!mean || other) {
      return absl::FailedPreconditionError(
          "bert: 1_Pooling/config.json: only mean pooling (pooling_mode_mean_tokens alone) is supported");
    }
  }
  return settings;
}

}  // namespace bulwark::bert
