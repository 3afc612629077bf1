// Loading of a sentence-transformers model directory, the embedder's fingerprint, and batching
// texts across cores.
#include "embed/bert/bert_embedder.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "core/hex.h"
#include "core/parallel_for.h"
#include "core/status_macros.h"
#include "embed/bert/bert_config.h"
#include "embed/bert/bert_weights.h"
#include "embed/bert/bounded_file.h"
#include "embed/bert/safetensors.h"
#include "net/json_http_client.h"

namespace bulwark {
namespace {

constexpr uint64_t kMaxSettingsBytes = 1 << 20;  // config.json and the other JSON files
constexpr int kMaxThreads = 256;
constexpr char kWho[] = "bert embedder";

// The file's contents, or "" when it does not exist.
absl::StatusOr<std::string> ReadOptional(const std::string& path) {
  absl::StatusOr<std::string> text = bert::ReadBoundedFile(path, kMaxSettingsBytes);
  if (absl::IsNotFound(text.status())) return std::string();
  return text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<BertEmbedder>> BertEmbedder::Load(BertEmbedderOptions options) {
  if (options.path.empty()) return absl::InvalidArgumentError("bert embedder: \"path\" is required");
  if (options.threads < 0 || options.threads > kMaxThreads) {
    return absl::InvalidArgumentError(
        absl::StrCat("bert embedder: \"threads\" must be in [0, ", kMaxThreads, "]"));
  }
  const std::string dir = options.path + "/";
  BULWARK_ASSIGN_OR_RETURN(std::string config_text,
                           bert::ReadBoundedFile(dir + "config.json", kMaxSettingsBytes));
  absl::StatusOr<bert::BertConfig> config = bert::ParseBertConfig(config_text);
  BULWARK_RETURN_IF_ERROR(config.status());

  absl::StatusOr<std::string> sentence = ReadOptional(dir + "sentence_bert_config.json");
  absl::StatusOr<std::string> tokenizer_config = ReadOptional(dir + "tokenizer_config.json");
  absl::StatusOr<std::string> pooling = ReadOptional(dir + "1_Pooling/config.json");
  for (const auto* file : {&sentence, &tokenizer_config, &pooling}) {
    if (!file->ok()) return file->status();
  }
  BULWARK_ASSIGN_OR_RETURN(bert::SentenceSettings settings,
                           bert::ParseSentenceSettings(*sentence, *tokenizer_config, *pooling, *config));
  if (options.max_seq_length != 0) {
    if (options.max_seq_length < 2 || options.max_seq_length > config->max_position_embeddings) {
      return absl::InvalidArgumentError(absl::StrCat("bert embedder: \"max_seq_length\" must be in [2, ",
                                                     config->max_position_embeddings, "]"));
    }
    settings.max_seq_length = options.max_seq_length;
  }

  BULWARK_ASSIGN_OR_RETURN(std::string vocab_text,
                           bert::ReadBoundedFile(dir + "vocab.txt", bert::BertTokenizer::kMaxVocabBytes));
  BULWARK_ASSIGN_OR_RETURN(
      bert::BertTokenizer tokenizer,
      bert::BertTokenizer::FromVocab(vocab_text, settings.do_lower_case, config->vocab_size));

  BULWARK_ASSIGN_OR_RETURN(std::string model_bytes,
                           bert::ReadBoundedFile(dir + "model.safetensors", options.max_model_bytes));
  BULWARK_ASSIGN_OR_RETURN(bert::SafetensorsFile file, bert::SafetensorsFile::Parse(model_bytes));
  BULWARK_ASSIGN_OR_RETURN(bert::BertWeights weights, bert::LoadBertWeights(file, *config));

  const nlohmann::json identity = {
      {"algorithm", kAlgorithmVersion},          {"config_sha256", Sha256Hex(config_text)},
      {"do_lower_case", settings.do_lower_case}, {"max_seq_length", settings.max_seq_length},
      {"model_sha256", Sha256Hex(model_bytes)},  {"vocab_sha256", Sha256Hex(vocab_text)}};
  EmbedderFingerprint fingerprint{
      .name = "bert", .dimension = config->hidden_size, .config_hash = Sha256Hex(identity.dump())};
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::unique_ptr<BertEmbedder>(
      new BertEmbedder(std::move(tokenizer), bert::BertModel(*config, std::move(weights)),
                       settings.max_seq_length, threads, std::move(fingerprint)));
}

absl::StatusOr<std::unique_ptr<BertEmbedder>> BertEmbedder::FromConfig(const nlohmann::json& config) {
  if (absl::Status s =
          CheckConfigKeys(config, {"kind", "path", "max_seq_length", "threads", "max_model_mb"}, kWho);
      !s.ok()) {
    return s;
  }
  BertEmbedderOptions options;
  int max_model_mb = static_cast<int>(options.max_model_bytes >> 20);
  for (absl::Status s : {ReadConfigString(config, "path", kWho, &options.path),
                         ReadConfigInt(config, "max_seq_length", 2, 8192, kWho, &options.max_seq_length),
                         ReadConfigInt(config, "threads", 1, kMaxThreads, kWho, &options.threads),
                         ReadConfigInt(config, "max_model_mb", 1, 1 << 16, kWho, &max_model_mb)}) {
    BULWARK_RETURN_IF_ERROR(s);
  }
  if (options.path.empty()) return absl::InvalidArgumentError("bert embedder: \"path\" is required");
  options.max_model_bytes = static_cast<uint64_t>(max_model_mb) << 20;
  return Load(std::move(options));
}

BertEmbedder::BertEmbedder(bert::BertTokenizer tokenizer, bert::BertModel model, int max_seq_length,
                           int threads, EmbedderFingerprint fingerprint)
    : tokenizer_(std::move(tokenizer)),
      model_(std::move(model)),
      max_seq_length_(max_seq_length),
      threads_(threads),
      fingerprint_(std::move(fingerprint)) {}

std::vector<int32_t> BertEmbedder::TokenIds(std::string_view text) const {
  return tokenizer_.Encode(text, max_seq_length_);
}

absl::StatusOr<std::vector<float>> BertEmbedder::Embed(std::string_view text) const {
  return model_.Embed(TokenIds(text));
}

absl::StatusOr<std::vector<std::vector<float>>> BertEmbedder::EmbedBatch(
    std::span<const std::string> texts) const {
  std::vector<std::vector<float>> out(texts.size());
  // Texts differ in length, so each worker takes the next unclaimed text rather than a fixed slice.
  std::atomic<size_t> next{0};
  const size_t workers = std::min(texts.size(), static_cast<size_t>(threads_));
  absl::Status status = ParallelFor(workers, workers, [&](size_t, size_t) {
    for (size_t i = next++; i < texts.size(); i = next++) {
      BULWARK_ASSIGN_OR_RETURN(std::vector<float> vec, Embed(texts[i]));
      out[i] = std::move(vec);
    }
    return absl::OkStatus();
  });
  BULWARK_RETURN_IF_ERROR(status);
  return out;
}

}  // namespace bulwark
