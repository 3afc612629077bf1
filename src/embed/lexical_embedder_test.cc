// Tests of LexicalEmbedder: the vector contract (unit norm, zero vector, determinism), the
// optimized hot path against a plain reference implementation of the documented algorithm,
// golden values that pin the algorithm to its version, and the similarity behaviour that the
// defenses rely on (paraphrases close, synonyms shared, unrelated texts far).
#include "embed/lexical_embedder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <thread>

#include "core/hex.h"
#include "embed/idf_table.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::Each;
using ::testing::ElementsAre;

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

std::vector<float> MustEmbed(const Embedder& e, std::string_view text) {
  absl::StatusOr<std::vector<float>> v = e.Embed(text);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *std::move(v) : std::vector<float>();
}

// The algorithm of lexical_embedder.h, written for clarity rather than speed: std::string
// n-grams, a std::map of features, double arithmetic.
std::vector<float> ReferenceEmbed(std::string_view text, const WordNetCanonicalizer* wn) {
  auto is_word_any_case = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || static_cast<unsigned char>(c) >= 0x80;
  };
  if (text.size() > LexicalEmbedder::kMaxTextBytes) {
    size_t end = LexicalEmbedder::kMaxTextBytes;
    if (is_word_any_case(text[end])) {
      while (end > 0 && is_word_any_case(text[end - 1])) --end;
    }
    text = text.substr(0, end);
  }
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  auto is_word = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80;
  };
  std::vector<std::string> tokens;
  std::vector<double> idfs;
  std::string current;
  for (size_t i = 0; i <= lower.size(); ++i) {
    if (i < lower.size() && is_word(static_cast<unsigned char>(lower[i]))) {
      current += lower[i];
    } else if (!current.empty()) {
      std::string canonical = wn ? std::string(wn->Canonicalize(current)) : current;
      std::optional<float> idf = IdfFind(canonical);
      idfs.push_back(idf ? *idf : IdfLookup(current));
      tokens.push_back(canonical);
      current.clear();
    }
  }
  auto hash = [](const std::string& s, uint64_t seed) {
    return XXH3_64bits_withSeed(s.data(), s.size(), seed);
  };
  struct Feature {
    int count = 0;
    double idf = 0;
  };
  std::map<std::pair<int, uint64_t>, Feature> features;
  auto add = [&](int group, uint64_t key, double idf) {
    Feature& f = features[{group, key}];
    ++f.count;
    f.idf = std::max(f.idf, idf);
  };
  for (size_t t = 0; t < tokens.size(); ++t) {
    add(0, hash(tokens[t], LexicalEmbedder::kUnigramSeed), idfs[t]);
    if (t + 1 < tokens.size()) {
      add(1,
          hash(tokens[t + 1], LexicalEmbedder::kBigramSeed ^ hash(tokens[t], LexicalEmbedder::kUnigramSeed)),
          (idfs[t] + idfs[t + 1]) / 2);
    }
    const std::string padded = "<" + tokens[t] + ">";
    for (size_t n = 3; n <= 5; ++n) {
      for (size_t i = 0; i + n <= padded.size(); ++i)
        add(2, hash(padded.substr(i, n), LexicalEmbedder::kCharSeed), idfs[t]);
    }
  }
  const int d = LexicalEmbedder::kDimension;
  std::vector<std::vector<double>> groups(3, std::vector<double>(d, 0.0));
  for (const auto& [id, f] : features) {
    const uint64_t key = id.second;
    const size_t coordinate = ((key >> 32) * d) >> 32;
    const double value = (1 + std::log(f.count)) * f.idf;
    groups[id.first][coordinate] += (key & 1) ? -value : value;
  }
  const double weights[3] = {LexicalEmbedder::kUnigramWeight, LexicalEmbedder::kBigramWeight,
                             LexicalEmbedder::kCharNgramWeight};
  std::vector<double> sum(d, 0.0);
  for (int g = 0; g < 3; ++g) {
    double norm = 0;
    for (double x : groups[g]) norm += x * x;
    if (norm == 0) continue;
    for (int i = 0; i < d; ++i) sum[i] += weights[g] * groups[g][i] / std::sqrt(norm);
  }
  double norm = 0;
  for (double x : sum) norm += x * x;
  std::vector<float> out(d, 0.0f);
  if (norm > 0) {
    for (int i = 0; i < d; ++i) out[i] = static_cast<float>(sum[i] / std::sqrt(norm));
  }
  return out;
}

const char* const kTexts[] = {
    "The quick brown fox jumps over the lazy dog.",
    "I bought a new car",
    "The user prefers dark mode in the editor and Vim key bindings.",
    "spam spam spam spam eggs spam",
    "Grüße aus München, naïve café",
    "x",
    "Alice's birthday is on March 3rd; remind me at 9am!",
    "running runs ran mice geese better best",
};

std::shared_ptr<const WordNetCanonicalizer> RealWordNet() {
  const std::string dir(WordNetCanonicalizer::kDefaultDir);
  if (!WordNetCanonicalizer::CheckDataPresent(dir).ok()) return nullptr;
  auto shared = WordNetCanonicalizer::Shared(dir);
  return shared.ok() ? *shared : nullptr;
}

class LexicalEmbedderTest : public ::testing::Test {
 protected:
  void SetUp() override { wordnet_ = RealWordNet(); }
  void RequireWordNet() {
    if (!wordnet_) GTEST_SKIP() << "WordNet data not installed";
  }
  std::shared_ptr<const WordNetCanonicalizer> wordnet_;
  LexicalEmbedder plain_{nullptr};
};

TEST_F(LexicalEmbedderTest, VectorsHaveUnitNormAndTheDimension) {
  LexicalEmbedder with_synonyms(wordnet_);
  for (const Embedder* e :
       {static_cast<const Embedder*>(&plain_), static_cast<const Embedder*>(&with_synonyms)}) {
    EXPECT_EQ(e->dimension(), 384);
    for (const char* text : kTexts) {
      std::vector<float> v = MustEmbed(*e, text);
      ASSERT_EQ(v.size(), 384u);
      EXPECT_NEAR(Dot(v, v), 1.0, 1e-5) << text;
    }
  }
}

TEST_F(LexicalEmbedderTest, TextWithoutFeaturesIsTheZeroVector) {
  for (const char* text : {"", "   \n\t ", "!?.,;:-- ()[]{} ... ''"}) {
    std::vector<float> v = MustEmbed(plain_, text);
    ASSERT_EQ(v.size(), 384u);
    EXPECT_THAT(v, Each(0.0f)) << "'" << text << "'";
  }
}

TEST_F(LexicalEmbedderTest, DeterministicAcrossCallsInstancesAndThreads) {
  LexicalEmbedder other(nullptr);
  std::vector<std::vector<float>> expected;
  for (const char* text : kTexts) {
    expected.push_back(MustEmbed(plain_, text));
    EXPECT_EQ(MustEmbed(plain_, text), expected.back());  // bit-identical
    EXPECT_EQ(MustEmbed(other, text), expected.back());
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (size_t i = 0; i < std::size(kTexts); ++i) {
          if (*plain_.Embed(kTexts[i]) != expected[i]) ++mismatches[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(mismatches, Each(0));
}

TEST_F(LexicalEmbedderTest, MatchesReferenceImplementation) {
  std::string long_text;
  for (int i = 0; i < 100; ++i) long_text += "spam and eggs ";  // tf beyond the log table
  std::vector<std::string> texts(std::begin(kTexts), std::end(kTexts));
  texts.push_back(long_text);
  texts.push_back(std::string(3000, 'q'));  // one very long token
  std::string over_limit;
  while (over_limit.size() < LexicalEmbedder::kMaxTextBytes + 100) over_limit += "Lorem ipsum dolor! ";
  texts.push_back(over_limit);
  for (const WordNetCanonicalizer* wn : {static_cast<const WordNetCanonicalizer*>(nullptr), wordnet_.get()}) {
    LexicalEmbedder embedder(wn ? wordnet_ : nullptr);
    for (const std::string& text : texts) {
      std::vector<float> fast = MustEmbed(embedder, text);
      std::vector<float> reference = ReferenceEmbed(text, wn);
      ASSERT_EQ(fast.size(), reference.size());
      for (size_t i = 0; i < fast.size(); ++i) {
        ASSERT_NEAR(fast[i], reference[i], 2e-6)
            << "coordinate " << i << " of '" << text.substr(0, 40) << "'";
      }
    }
  }
}

// Pins the vectors of algorithm version "bulwark.lexical.v1". If this fails, the vectors changed:
// either revert the change, or bump LexicalEmbedder::kAlgorithmVersion (which changes the
// fingerprint, so existing stores refuse the new vectors instead of mixing spaces) and update
// these values together with the fingerprint expectation in FingerprintIsVersionedAndRecordsSynonyms.
TEST_F(LexicalEmbedderTest, GoldenValuesOfVersion1) {
  ASSERT_EQ(LexicalEmbedder::kAlgorithmVersion, "bulwark.lexical.v1");
  const std::vector<float> v = MustEmbed(plain_, "The quick brown fox jumps over the lazy dog.");
  // The first 8 non-zero coordinates (index, value) and the number of non-zero coordinates.
  const std::pair<int, float> kGolden[8] = {{1, -0.0493636169f}, {10, 0.0784042105f}, {16, -0.0264091212f},
                                            {22, 0.0836200342f}, {27, -0.139031008f}, {41, 0.0651854873f},
                                            {50, -0.159088686f}, {51, -0.0784042105f}};
  std::vector<std::pair<int, float>> nonzero;
  for (int i = 0; i < 384; ++i) {
    if (v[i] != 0.0f) nonzero.emplace_back(i, v[i]);
  }
  EXPECT_EQ(nonzero.size(), 77u);
  ASSERT_GE(nonzero.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(nonzero[i].first, kGolden[i].first) << "non-zero coordinate #" << i;
    EXPECT_NEAR(nonzero[i].second, kGolden[i].second, 1e-6) << "non-zero coordinate #" << i;
  }
}

TEST_F(LexicalEmbedderTest, FingerprintIsVersionedAndRecordsSynonyms) {
  const EmbedderFingerprint off = plain_.Fingerprint();
  EXPECT_EQ(off.name, "lexical");
  EXPECT_EQ(off.dimension, 384);
  EXPECT_EQ(off.config_hash,
            Sha256Hex(R"({"algorithm":"bulwark.lexical.v1","dimension":384,"synonyms":false})"));
  EXPECT_EQ(off.ToString(), "lexical/384/" + off.config_hash);
  EXPECT_EQ(LexicalEmbedder(nullptr).Fingerprint(), off);

  RequireWordNet();
  const EmbedderFingerprint on = LexicalEmbedder(wordnet_).Fingerprint();
  EXPECT_NE(on, off);
  EXPECT_EQ(on.config_hash, Sha256Hex(R"({"algorithm":"bulwark.lexical.v1","dimension":384,"synonyms":true,)"
                                      R"("wordnet_digest":")" +
                                      wordnet_->data_digest() + R"("})"));
}

TEST_F(LexicalEmbedderTest, GlossGroupIsRecordedInTheFingerprintAndNeedsACanonicalizer) {
  RequireWordNet();
  auto table = WordNetGlosses::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
  ASSERT_TRUE(table.ok()) << table.status();
  const LexicalEmbedder glossed(wordnet_, {.glosses = *table, .weight = 2, .related = 0.5f, .senses = 1});
  EXPECT_TRUE(glossed.glosses());
  EXPECT_EQ(glossed.Fingerprint().config_hash,
            Sha256Hex(R"({"algorithm":"bulwark.lexical.v1","dimension":384,"glosses":{"related":0.5,)"
                      R"("senses":1,"weight":2.0},"synonyms":true,"wordnet_digest":")" +
                      wordnet_->data_digest() + R"("})"));
  EXPECT_NE(glossed.Fingerprint(), LexicalEmbedder(wordnet_).Fingerprint());
  EXPECT_NE(glossed.Fingerprint(), LexicalEmbedder(wordnet_, {.glosses = *table, .weight = 1}).Fingerprint());
  // Without a canonicalizer the group is off and the fingerprint is the plain one.
  const LexicalEmbedder no_wordnet(nullptr, {.glosses = *table});
  EXPECT_FALSE(no_wordnet.glosses());
  EXPECT_EQ(no_wordnet.Fingerprint(), plain_.Fingerprint());
}

TEST_F(LexicalEmbedderTest, GlossGroupRelatesTextsThatShareNoWord) {
  RequireWordNet();
  auto table = WordNetGlosses::Shared(std::string(WordNetCanonicalizer::kDefaultDir));
  ASSERT_TRUE(table.ok()) << table.status();
  const LexicalEmbedder words(wordnet_);
  const LexicalEmbedder glossed(wordnet_, {.glosses = *table, .weight = 1});
  const char* query = "What vehicle do I own?";
  const char* memory = "I drive a green Subaru Forester.";  // drive: "operate or control a vehicle"
  const char* unrelated = "Tax appointment at the bank on March 28.";
  const double before = Dot(MustEmbed(words, query), MustEmbed(words, memory));
  const double after = Dot(MustEmbed(glossed, query), MustEmbed(glossed, memory));
  const double unrelated_before = Dot(MustEmbed(words, query), MustEmbed(words, unrelated));
  const double unrelated_after = Dot(MustEmbed(glossed, query), MustEmbed(glossed, unrelated));
  // The gloss group raises the paraphrase pair's cosine, and by more than the unrelated pair's
  // (the other groups' shared character n-grams keep their weight).
  EXPECT_GT(after, before + 0.03) << before << " -> " << after;
  EXPECT_GT(after - before, unrelated_after - unrelated_before + 0.03)
      << before << " -> " << after << "; unrelated " << unrelated_before << " -> " << unrelated_after;
  for (const char* text : kTexts) {
    const auto v = MustEmbed(glossed, text);
    double norm = 0;
    for (float x : v) norm += static_cast<double>(x) * x;
    if (norm > 0) {
      EXPECT_NEAR(norm, 1.0, 1e-5) << text;
    }
    EXPECT_EQ(v, MustEmbed(glossed, text)) << "deterministic: " << text;
  }
}

TEST_F(LexicalEmbedderTest, GlossConfigIsCheckedBeforeLoading) {
  using Json = nlohmann::json;
  auto code = [](const Json& config) { return LexicalEmbedder::FromConfig(config).status().code(); };
  const auto kInvalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", 1}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", {{"colour", 1}}}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", {{"weight", 0}}}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", {{"weight", "1"}}}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", {{"related", 11}}}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", {{"senses", 1.5}}}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"glosses", {{"senses", 5}}}}), kInvalid);
  EXPECT_EQ(code({{"kind", "lexical"}, {"synonyms", false}, {"glosses", Json::object()}}), kInvalid);
  EXPECT_EQ(LexicalEmbedder::FromConfig({{"kind", "lexical"}, {"glosses", Json::object()}}, "/nonexistent/wn")
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  RequireWordNet();
  auto ok = LexicalEmbedder::FromConfig({{"kind", "lexical"}, {"glosses", {{"weight", 2}, {"senses", 2}}}});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE((*ok)->glosses());
}

TEST_F(LexicalEmbedderTest, OnlyTheFirst64KiBCountAndACrossingTokenIsDropped) {
  const size_t limit = LexicalEmbedder::kMaxTextBytes;
  // "crossing" straddles the limit, so nothing of it is embedded: all-blank prefix, zero vector.
  std::string text = std::string(limit - 3, ' ') + "crossing the limit";
  EXPECT_THAT(MustEmbed(plain_, text), Each(0.0f));
  // A token that ends exactly at the limit is kept.
  text = std::string(limit - 4, ' ') + "kept dropped";
  EXPECT_EQ(MustEmbed(plain_, text), MustEmbed(plain_, "kept"));
  // A 16 MiB text (the store's largest) embeds as its prefix, without trouble.
  std::string huge;
  while (huge.size() < (16u << 20)) huge += "memory entries about gardening and tomatoes ";
  const std::vector<float> v = MustEmbed(plain_, huge);
  EXPECT_NEAR(Dot(v, v), 1.0, 1e-5);
  EXPECT_EQ(v, MustEmbed(plain_, std::string_view(huge).substr(0, limit)));
}

TEST_F(LexicalEmbedderTest, CaseDoesNotMatter) {
  EXPECT_EQ(MustEmbed(plain_, "Hello WORLD, Dark Mode"), MustEmbed(plain_, "hello world, dark mode"));
}

TEST_F(LexicalEmbedderTest, ParaphrasesScoreHigherThanUnrelatedTexts) {
  LexicalEmbedder with_synonyms(wordnet_);
  for (const Embedder* e :
       {static_cast<const Embedder*>(&plain_), static_cast<const Embedder*>(&with_synonyms)}) {
    const auto a = MustEmbed(*e, "The user prefers dark mode in the code editor");
    const auto b = MustEmbed(*e, "User likes the dark theme in their code editor");
    const auto c = MustEmbed(*e, "Meeting with Alice scheduled for Tuesday at 3pm");
    const auto d = MustEmbed(*e, "The quarterly invoice was paid late by finance");
    EXPECT_GT(Dot(a, b), 0.35);
    EXPECT_GT(Dot(a, b), Dot(a, c) + 0.25);
    EXPECT_GT(Dot(a, b), Dot(a, d) + 0.25);
    // Inflections overlap through character n-grams even without WordNet.
    EXPECT_GT(Dot(MustEmbed(*e, "deploying services"), MustEmbed(*e, "deployed service")),
              Dot(MustEmbed(*e, "deploying services"), MustEmbed(*e, "eating lunch")) + 0.3);
  }
}

TEST_F(LexicalEmbedderTest, SynonymCanonicalizationBringsSynonymsTogether) {
  RequireWordNet();
  LexicalEmbedder with_synonyms(wordnet_);
  const char* a = "I bought a new car";
  const char* b = "I purchased a new automobile";
  const double on = Dot(MustEmbed(with_synonyms, a), MustEmbed(with_synonyms, b));
  const double off = Dot(MustEmbed(plain_, a), MustEmbed(plain_, b));
  EXPECT_GT(on, off + 0.3);
  EXPECT_GT(on, 0.99);  // both canonicalize to "i buy a new car"
  // An unrelated sentence does not come closer.
  const char* c = "The weather is sunny today";
  EXPECT_LT(Dot(MustEmbed(with_synonyms, a), MustEmbed(with_synonyms, c)), 0.2);
}

TEST_F(LexicalEmbedderTest, TokensShowMorphologyAndSynonyms) {
  EXPECT_THAT(plain_.Tokens("The MICE were running!"), ElementsAre("the", "mice", "were", "running"));
  RequireWordNet();
  LexicalEmbedder with_synonyms(wordnet_);
  EXPECT_THAT(with_synonyms.Tokens("The MICE were running!"), ElementsAre("the", "mouse", "were", "run"));
  EXPECT_THAT(with_synonyms.Tokens("I purchased a new automobile"),
              ElementsAre("i", "buy", "a", "new", "car"));
  EXPECT_TRUE(with_synonyms.synonyms());
  EXPECT_FALSE(plain_.synonyms());
}

TEST_F(LexicalEmbedderTest, NonAsciiBytesStayInTokens) {
  EXPECT_THAT(plain_.Tokens("Grüße aus München"), ElementsAre("grüße", "aus", "münchen"));
  // No Unicode case folding: only A-Z are lowercased.
  EXPECT_NE(MustEmbed(plain_, "ÄRGER"), MustEmbed(plain_, "ärger"));
}

TEST_F(LexicalEmbedderTest, EmbedBatchEqualsEmbedPerText) {
  const std::vector<std::string> texts(std::begin(kTexts), std::end(kTexts));
  absl::StatusOr<std::vector<std::vector<float>>> batch = plain_.EmbedBatch(texts);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ((*batch)[i], MustEmbed(plain_, texts[i]));
  auto empty = plain_.EmbedBatch({});
  ASSERT_THAT(empty, IsOk());
  EXPECT_TRUE(empty->empty());
}

TEST(IdfTableTest, CommonWordsWeighLessThanRareOnes) {
  EXPECT_GT(IdfTableSize(), 30000);
  EXPECT_LT(IdfLookup("the"), 2.0f);
  EXPECT_LT(IdfLookup("the"), IdfLookup("car"));
  EXPECT_LT(IdfLookup("car"), IdfLookup("automobile"));
  EXPECT_EQ(IdfLookup("qwzxvbnm"), IdfUnknown());
  EXPECT_FALSE(IdfFind("qwzxvbnm").has_value());
  EXPECT_GE(IdfUnknown(), IdfLookup("automobile"));
}

}  // namespace
}  // namespace bulwark
