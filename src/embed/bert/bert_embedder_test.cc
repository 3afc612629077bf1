// End-to-end tests of the bert embedder against an independent NumPy reference: testdata/
// make_random_bert.py writes a small random model (hidden 32, 2 layers, 4 heads, ~170 tokens) as
// F32, F16 or BF16 safetensors and the reference token ids and embeddings; BertEmbedder must match
// the ids exactly and the vectors to 1e-5. Also: the fingerprint covers the model file, batching
// equals one-by-one embedding, and a broken model directory is refused with the documented code.
#include "embed/bert/bert_embedder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bulwark/embedder.h"
#include "embed/embedder_factory.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr double kTolerance = 1e-5;

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void WriteAll(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Runs the generator into a fresh directory; `args` are extra flags.
class RandomModel {
 public:
  explicit RandomModel(const std::string& args = "") {
    const std::string command = std::string(BULWARK_PYTHON3) + " " + BULWARK_BERT_TESTDATA +
                                "/make_random_bert.py " + dir_.path().string() + " " + args;
    status_ = std::system(command.c_str());
    if (status_ == 0) reference_ = json::parse(ReadAll(dir_ / "reference.json"), nullptr, false);
  }
  bool ok() const { return status_ == 0 && reference_.is_object(); }
  std::string path() const { return dir_.path().string(); }
  std::filesystem::path operator/(const std::string& name) const { return dir_ / name; }
  const json& reference() const { return reference_; }

 private:
  testing::TempDir dir_;
  int status_ = -1;
  json reference_;
};

std::unique_ptr<Embedder> Load(const std::string& path) {
  absl::StatusOr<std::unique_ptr<Embedder>> embedder = CreateEmbedder({{"kind", "bert"}, {"path", path}});
  EXPECT_TRUE(embedder.ok()) << embedder.status();
  return embedder.ok() ? *std::move(embedder) : nullptr;
}

// Compares every reference text's ids and embedding; returns the largest absolute difference.
double CheckAgainstReference(const RandomModel& model) {
  absl::StatusOr<std::unique_ptr<BertEmbedder>> embedder = BertEmbedder::Load({.path = model.path()});
  EXPECT_TRUE(embedder.ok()) << embedder.status();
  if (!embedder.ok()) return INFINITY;
  const json& ref = model.reference();
  double worst = 0;
  for (size_t i = 0; i < ref["texts"].size(); ++i) {
    const std::string text = ref["texts"][i];
    EXPECT_EQ((*embedder)->TokenIds(text), ref["ids"][i].get<std::vector<int32_t>>())
        << "text " << i << ": " << text;
    absl::StatusOr<std::vector<float>> vec = (*embedder)->Embed(text);
    EXPECT_TRUE(vec.ok()) << vec.status();
    if (!vec.ok()) return INFINITY;
    const std::vector<double> expected = ref["embeddings"][i];
    EXPECT_EQ(vec->size(), expected.size());
    double norm = 0;
    for (size_t k = 0; k < vec->size() && k < expected.size(); ++k) {
      worst = std::max(worst, std::abs((*vec)[k] - expected[k]));
      norm += double{(*vec)[k]} * (*vec)[k];
    }
    EXPECT_NEAR(norm, 1.0, 1e-5);
  }
  return worst;
}

TEST(BertEmbedderTest, MatchesNumpyReferenceF32) {
  RandomModel model;
  ASSERT_TRUE(model.ok()) << "make_random_bert.py failed; is python3-numpy installed (scripts/setup)?";
  ASSERT_EQ(model.reference()["texts"].size(), 12u);
  const double worst = CheckAgainstReference(model);
  EXPECT_LT(worst, kTolerance);
  RecordProperty("max_abs_diff", (std::ostringstream() << worst).str());
}

TEST(BertEmbedderTest, MatchesNumpyReferenceF16) {
  RandomModel model("--dtype F16 --seed 11");
  ASSERT_TRUE(model.ok());
  const double worst = CheckAgainstReference(model);
  EXPECT_LT(worst, kTolerance);
  RecordProperty("max_abs_diff", (std::ostringstream() << worst).str());
}

TEST(BertEmbedderTest, MatchesNumpyReferenceBf16WithBertPrefix) {
  RandomModel model("--dtype BF16 --prefix --seed 12 --max-seq-length 40");
  ASSERT_TRUE(model.ok());
  const double worst = CheckAgainstReference(model);
  EXPECT_LT(worst, kTolerance);
  RecordProperty("max_abs_diff", (std::ostringstream() << worst).str());
}

TEST(BertEmbedderTest, BatchEqualsOneByOneOnAnyThreadCount) {
  RandomModel model;
  ASSERT_TRUE(model.ok());
  std::vector<std::string> texts = model.reference()["texts"];
  for (int i = 0; i < 40; ++i) texts.push_back("the fox number " + std::to_string(i));
  for (int threads : {1, 3, 8}) {
    absl::StatusOr<std::unique_ptr<BertEmbedder>> embedder =
        BertEmbedder::Load({.path = model.path(), .threads = threads});
    ASSERT_TRUE(embedder.ok()) << embedder.status();
    absl::StatusOr<std::vector<std::vector<float>>> batch = (*embedder)->EmbedBatch(texts);
    ASSERT_TRUE(batch.ok()) << batch.status();
    ASSERT_EQ(batch->size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i) {
      absl::StatusOr<std::vector<float>> one = (*embedder)->Embed(texts[i]);
      ASSERT_TRUE(one.ok()) << one.status();
      EXPECT_EQ((*batch)[i], *one) << "threads " << threads << ", text " << i;
    }
  }
  absl::StatusOr<std::unique_ptr<BertEmbedder>> embedder = BertEmbedder::Load({.path = model.path()});
  ASSERT_TRUE(embedder.ok()) << embedder.status();
  absl::StatusOr<std::vector<std::vector<float>>> empty = (*embedder)->EmbedBatch({});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->empty());
}

TEST(BertEmbedderTest, FingerprintCoversModelFileAndSettings) {
  RandomModel model;
  ASSERT_TRUE(model.ok());
  std::unique_ptr<Embedder> first = Load(model.path());
  ASSERT_NE(first, nullptr);
  const EmbedderFingerprint fingerprint = first->Fingerprint();
  EXPECT_EQ(fingerprint.name, "bert");
  EXPECT_EQ(fingerprint.dimension, 32);
  EXPECT_EQ(fingerprint.config_hash.size(), 64u);
  EXPECT_EQ(Load(model.path())->Fingerprint(), fingerprint);  // deterministic

  // threads changes nothing; max_seq_length changes the vectors of long texts, so the fingerprint.
  auto threaded = CreateEmbedder({{"kind", "bert"}, {"path", model.path()}, {"threads", 2}});
  ASSERT_TRUE(threaded.ok()) << threaded.status();
  EXPECT_EQ((*threaded)->Fingerprint(), fingerprint);
  auto shorter = CreateEmbedder({{"kind", "bert"}, {"path", model.path()}, {"max_seq_length", 16}});
  ASSERT_TRUE(shorter.ok()) << shorter.status();
  EXPECT_NE((*shorter)->Fingerprint(), fingerprint);

  // One weight byte changed (the last byte of the file, inside the last float tensor's data is
  // not guaranteed, so change a byte well inside the data region): same shapes, new hash.
  std::string bytes = ReadAll(model / "model.safetensors");
  bytes[bytes.size() - 1000] ^= 0x01;
  WriteAll(model / "model.safetensors", bytes);
  std::unique_ptr<Embedder> changed = Load(model.path());
  ASSERT_NE(changed, nullptr);
  EXPECT_EQ(changed->dimension(), fingerprint.dimension);
  EXPECT_NE(changed->Fingerprint(), fingerprint);
}

TEST(BertEmbedderTest, ConfigErrors) {
  RandomModel model;
  ASSERT_TRUE(model.ok());
  auto code = [](const json& config) { return CreateEmbedder(config).status().code(); };
  EXPECT_EQ(code({{"kind", "bert"}}), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({{"kind", "bert"}, {"path", ""}}), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({{"kind", "bert"}, {"path", 3}}), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({{"kind", "bert"}, {"path", model.path()}, {"colour", "red"}}),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({{"kind", "bert"}, {"path", model.path()}, {"threads", 0}}),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      code({{"kind", "bert"}, {"path", model.path()}, {"max_seq_length", 41}}),  // > max_position_embeddings
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code({{"kind", "bert"}, {"path", model.path() + "/nope"}}), absl::StatusCode::kNotFound);
  // A model file over the configured limit is refused before it is read.
  EXPECT_EQ(BertEmbedder::Load({.path = model.path(), .max_model_bytes = 1000}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(BertEmbedderTest, BrokenModelDirectoriesAreRefused) {
  RandomModel model;
  ASSERT_TRUE(model.ok());
  const std::string safetensors = ReadAll(model / "model.safetensors");
  const std::string config = ReadAll(model / "config.json");
  auto load_status = [&] { return BertEmbedder::Load({.path = model.path()}).status(); };

  WriteAll(model / "model.safetensors", safetensors.substr(0, safetensors.size() - 4));  // truncated
  EXPECT_EQ(load_status().code(), absl::StatusCode::kDataLoss) << load_status();
  WriteAll(model / "model.safetensors", safetensors);
  ASSERT_TRUE(load_status().ok()) << load_status();

  // config.json promising a different shape than the tensors have.
  json other = json::parse(config);
  other["intermediate_size"] = 48;
  WriteAll(model / "config.json", other.dump());
  EXPECT_EQ(load_status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(load_status().message(), HasSubstr("intermediate.dense.weight"));
  other = json::parse(config);
  other["num_hidden_layers"] = 3;  // layer 2 is missing
  WriteAll(model / "config.json", other.dump());
  EXPECT_EQ(load_status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(load_status().message(), HasSubstr("encoder.layer.2."));
  other = json::parse(config);
  other["hidden_act"] = "relu";
  WriteAll(model / "config.json", other.dump());
  EXPECT_EQ(load_status().code(), absl::StatusCode::kInvalidArgument);
  WriteAll(model / "config.json", config);

  // A vocabulary larger than the embedding table.
  const std::string vocab = ReadAll(model / "vocab.txt");
  WriteAll(model / "vocab.txt", vocab + "extra\n");
  EXPECT_EQ(load_status().code(), absl::StatusCode::kInvalidArgument);
  WriteAll(model / "vocab.txt", vocab);
  // Unsupported pooling.
  WriteAll(model / "1_Pooling/config.json", R"({"pooling_mode_cls_token": true})");
  EXPECT_EQ(load_status().code(), absl::StatusCode::kFailedPrecondition);
  std::filesystem::remove(model / "1_Pooling/config.json");  // optional file
  EXPECT_TRUE(load_status().ok()) << load_status();
  std::filesystem::remove(model / "vocab.txt");
  EXPECT_EQ(load_status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace bulwark
