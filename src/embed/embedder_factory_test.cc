// Tests of CreateEmbedder and the per-kind config parsers: which configs are accepted, which
// error each bad one gets, and how the WordNet fallback shows up in the fingerprint.
#include "embed/embedder_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "bulwark/embedder.h"
#include "core/hex.h"
#include "embed/http_embedder.h"
#include "embed/lexical_embedder.h"
#include "embed/wordnet_canonicalizer.h"

namespace bulwark {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr const char* kMissingDir = "/nonexistent/bulwark-test/wordnet";

bool WordNetInstalled() {
  return WordNetCanonicalizer::CheckDataPresent(std::string(WordNetCanonicalizer::kDefaultDir)).ok();
}

absl::StatusCode CodeOf(const json& config) { return CreateEmbedder(config).status().code(); }

TEST(CreateEmbedderTest, LexicalDefaultUsesSynonymsExactlyWhenWordNetIsInstalled) {
  auto embedder = CreateEmbedder({{"kind", "lexical"}});
  ASSERT_TRUE(embedder.ok()) << embedder.status();
  EXPECT_EQ((*embedder)->dimension(), 384);
  EXPECT_EQ((*embedder)->Fingerprint().name, "lexical");
  auto off = CreateEmbedder({{"kind", "lexical"}, {"synonyms", false}});
  ASSERT_TRUE(off.ok()) << off.status();
  if (WordNetInstalled()) {
    EXPECT_NE((*embedder)->Fingerprint(), (*off)->Fingerprint());
    auto on = CreateEmbedder({{"kind", "lexical"}, {"synonyms", true}});
    ASSERT_TRUE(on.ok()) << on.status();
    EXPECT_EQ((*embedder)->Fingerprint(), (*on)->Fingerprint());
  } else {
    EXPECT_EQ((*embedder)->Fingerprint(), (*off)->Fingerprint());
  }
}

TEST(CreateEmbedderTest, MissingWordNetFallsBackSilentlyOnlyByDefault) {
  // Key absent, default directory missing: synonyms off, and the fingerprint says so.
  auto fallback = LexicalEmbedder::FromConfig({{"kind", "lexical"}}, kMissingDir);
  ASSERT_TRUE(fallback.ok()) << fallback.status();
  EXPECT_FALSE((*fallback)->synonyms());
  EXPECT_EQ((*fallback)->Fingerprint(), LexicalEmbedder(nullptr).Fingerprint());

  // Explicitly requested: a clear FailedPrecondition.
  auto requested = LexicalEmbedder::FromConfig({{"kind", "lexical"}, {"synonyms", true}}, kMissingDir);
  EXPECT_EQ(requested.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(requested.status().message(), HasSubstr("WordNet"));
  EXPECT_THAT(requested.status().message(), HasSubstr(kMissingDir));

  // A wordnet_dir that does not exist is a request too ...
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"wordnet_dir", kMissingDir}}),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"synonyms", true}, {"wordnet_dir", kMissingDir}}),
            absl::StatusCode::kFailedPrecondition);
  // ... unless synonyms are off.
  auto off = CreateEmbedder({{"kind", "lexical"}, {"synonyms", false}, {"wordnet_dir", kMissingDir}});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ((*off)->Fingerprint(), LexicalEmbedder(nullptr).Fingerprint());
}

TEST(CreateEmbedderTest, WordNetDirOverridesTheDefault) {
  if (!WordNetInstalled()) GTEST_SKIP() << "WordNet data not installed";
  auto embedder = LexicalEmbedder::FromConfig(
      {{"kind", "lexical"}, {"wordnet_dir", std::string(WordNetCanonicalizer::kDefaultDir)}}, kMissingDir);
  ASSERT_TRUE(embedder.ok()) << embedder.status();
  EXPECT_TRUE((*embedder)->synonyms());
}

TEST(CreateEmbedderTest, BadConfigsAreInvalidArgument) {
  const absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(CodeOf(json::array()), kInvalid);
  EXPECT_EQ(CodeOf("lexical"), kInvalid);
  EXPECT_EQ(CodeOf(json::object()), kInvalid);
  EXPECT_EQ(CodeOf({{"kind", 7}}), kInvalid);
  EXPECT_EQ(CodeOf({{"kind", "bert2000"}}), kInvalid);
  EXPECT_THAT(CreateEmbedder({{"kind", "bert2000"}}).status().message(), HasSubstr("bert2000"));
  // lexical
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"synonym", false}}), kInvalid);  // typo
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"synonyms", "no"}}), kInvalid);
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"synonyms", 0}}), kInvalid);
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"wordnet_dir", 5}}), kInvalid);
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"wordnet_dir", ""}}), kInvalid);
  EXPECT_EQ(CodeOf({{"kind", "lexical"}, {"dimension", 128}}), kInvalid);
  // http
  const json good = {{"kind", "http"}, {"url", "http://127.0.0.1:8080"}, {"model", "m"}, {"dimension", 8}};
  ASSERT_TRUE(CreateEmbedder(good).ok()) << CreateEmbedder(good).status();
  auto with = [&](const char* key, json value) {
    json config = good;
    config[key] = std::move(value);
    return CodeOf(config);
  };
  auto without = [&](const char* key) {
    json config = good;
    config.erase(key);
    return CodeOf(config);
  };
  EXPECT_EQ(without("url"), kInvalid);
  EXPECT_EQ(without("model"), kInvalid);
  EXPECT_EQ(without("dimension"), kInvalid);
  EXPECT_EQ(with("url", "ftp://127.0.0.1"), kInvalid);
  EXPECT_EQ(with("url", "127.0.0.1:8080"), kInvalid);
  EXPECT_EQ(with("url", "http://"), kInvalid);
  EXPECT_EQ(with("url", "http://host:99999"), kInvalid);
  EXPECT_EQ(with("url", "http://host:8080/a b"), kInvalid);
  EXPECT_EQ(with("url", 8080), kInvalid);
  EXPECT_EQ(with("model", ""), kInvalid);
  EXPECT_EQ(with("dimension", 0), kInvalid);
  EXPECT_EQ(with("dimension", "384"), kInvalid);
  EXPECT_EQ(with("dimension", 3.5), kInvalid);
  EXPECT_EQ(with("batch_size", 0), kInvalid);
  EXPECT_EQ(with("timeout_ms", -1), kInvalid);
  EXPECT_EQ(with("max_retries", 11), kInvalid);
  EXPECT_EQ(with("initial_backoff_ms", "fast"), kInvalid);
  EXPECT_EQ(with("temperature", 0.5), kInvalid);
  EXPECT_EQ(with("api_key", 42), kInvalid);
  json both = good;
  both["api_key"] = "k";
  both["api_key_env"] = "BULWARK_TEST_KEY";
  EXPECT_EQ(CodeOf(both), kInvalid);
  ::unsetenv("BULWARK_TEST_UNSET_KEY");
  EXPECT_EQ(with("api_key_env", "BULWARK_TEST_UNSET_KEY"), kInvalid);
}

TEST(CreateEmbedderTest, HttpFingerprintCoversUrlModelDimensionButNotTheKey) {
  const json base = {{"kind", "http"}, {"url", "http://127.0.0.1:8080"}, {"model", "m"}, {"dimension", 8}};
  auto fingerprint = [](json config) {
    auto e = CreateEmbedder(config);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? (*e)->Fingerprint() : EmbedderFingerprint{};
  };
  const EmbedderFingerprint fp = fingerprint(base);
  EXPECT_EQ(fp.name, "http");
  EXPECT_EQ(fp.dimension, 8);
  EXPECT_EQ(fp.config_hash, Sha256Hex(R"({"dimension":8,"model":"m","url":"http://127.0.0.1:8080"})"));
  json keyed = base;
  keyed["api_key"] = "secret";
  keyed["batch_size"] = 3;
  keyed["timeout_ms"] = 50;
  EXPECT_EQ(fingerprint(keyed), fp);
  ::setenv("BULWARK_TEST_KEY", "from-env", 1);
  json env_keyed = base;
  env_keyed["api_key_env"] = "BULWARK_TEST_KEY";
  EXPECT_EQ(fingerprint(env_keyed), fp);
  for (const auto& [key, value] :
       {std::pair<const char*, json>{"url", "http://127.0.0.1:8081"}, {"model", "m2"}, {"dimension", 9}}) {
    json changed = base;
    changed[key] = value;
    EXPECT_NE(fingerprint(changed), fp) << key;
  }
}

TEST(EmbedderFingerprintTest, ToStringJoinsTheParts) {
  EmbedderFingerprint fp{"lexical", 384, "ab12"};
  EXPECT_EQ(fp.ToString(), "lexical/384/ab12");
}

}  // namespace
}  // namespace bulwark
