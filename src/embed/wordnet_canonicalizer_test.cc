// Tests of WordNetCanonicalizer: the mapping rules on a tiny hand-built WordNet (so each rule is
// checked on data whose answer is known), damage detection, and the behaviour on the real
// Debian WordNet 3.0 (skipped when /usr/share/wordnet is absent).
#include "embed/wordnet_canonicalizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Builds a syntactically valid WordNet database with a handful of synsets.
class MiniWordNet {
 public:
  // Adds a synset to data.<pos>; returns its byte offset.
  long AddSynset(const std::string& pos, const std::vector<std::string>& lemmas) {
    std::string& data = data_[pos];
    if (data.empty()) data = "  1 This is a tiny test database.\n";
    const long offset = static_cast<long>(data.size());
    char head[64];
    std::snprintf(head, sizeof(head), "%08ld 03 %c %02zx", offset, pos[0], lemmas.size());
    std::string line = head;
    for (const std::string& lemma : lemmas) line += " " + lemma + " 0";
    line += " 000 | a test gloss\n";
    data += line;
    return offset;
  }
  void AddIndex(const std::string& pos, const std::string& lemma, std::vector<long> offsets) {
    std::string line = lemma + " " + pos[0] + " " + std::to_string(offsets.size()) + " 1 @ " +
                       std::to_string(offsets.size()) + " 0";
    for (long offset : offsets) {
      char buf[16];
      std::snprintf(buf, sizeof(buf), " %08ld", offset);
      line += buf;
    }
    index_[pos] += line + "  \n";
  }
  void AddException(const std::string& pos, const std::string& form, const std::string& base) {
    exc_[pos] += form + " " + base + "\n";
  }
  // ss_type: 1 noun, 2 verb, 3 adj, 4 adv, 5 satellite.
  void AddCount(const std::string& lemma, int ss_type, int count) {
    counts_ += lemma + "%" + std::to_string(ss_type) + ":03:00:: 1 " + std::to_string(count) + "\n";
  }
  void Write(const std::filesystem::path& dir) const {
    std::filesystem::create_directories(dir);
    for (const char* pos : {"noun", "verb", "adj", "adv"}) {
      WriteFile(dir / ("index." + std::string(pos)), Get(index_, pos));
      WriteFile(dir / ("data." + std::string(pos)), Get(data_, pos));
      WriteFile(dir / (std::string(pos) + ".exc"), Get(exc_, pos));
    }
    WriteFile(dir / "cntlist.rev", counts_);
  }
  static void WriteFile(const std::filesystem::path& path, const std::string& content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  }

 private:
  static std::string Get(const std::map<std::string, std::string>& m, const std::string& key) {
    auto it = m.find(key);
    return it == m.end() ? "  1 license header only\n" : it->second;
  }
  std::map<std::string, std::string> data_, index_, exc_;
  std::string counts_;
};

std::filesystem::path TempDirFor(const std::string& name) {
  return std::filesystem::path(::testing::TempDir()) / ("wordnet_" + name + "_" + std::to_string(::getpid()));
}

class MiniWordNetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDirFor(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    // {Motor_car, auto, Automobile}: the first single-word lemma is "auto".
    const long car = wn_.AddSynset("noun", {"Motor_car", "auto", "Automobile"});
    // A synset whose lemmas are all collocations: its first lemma represents it.
    const long dessert = wn_.AddSynset("noun", {"ice_cream", "frozen_dessert"});
    const long mouse = wn_.AddSynset("noun", {"mouse"});
    const long run_noun = wn_.AddSynset("noun", {"tally", "run"});
    const long run_verb = wn_.AddSynset("verb", {"run"});
    const long sprint = wn_.AddSynset("verb", {"dash", "sprint", "run"});
    const long good = wn_.AddSynset("adj", {"good(a)"});
    wn_.AddIndex("noun", "automobile", {car});
    wn_.AddIndex("noun", "auto", {car});
    wn_.AddIndex("noun", "gelato", {dessert});
    wn_.AddIndex("noun", "mouse", {mouse});
    wn_.AddIndex("noun", "run", {run_noun});
    wn_.AddIndex("verb", "run", {run_verb, sprint});
    wn_.AddIndex("verb", "sprint", {sprint});
    wn_.AddIndex("noun", "in", {mouse});  // a stopword WordNet happens to list
    wn_.AddIndex("adj", "good", {good});
    wn_.AddException("noun", "mice", "mouse");
    wn_.AddException("verb", "ran", "run");
    wn_.AddException("adj", "better", "good");
    wn_.AddCount("run", 1, 3);   // run is tagged 3 times as a noun ...
    wn_.AddCount("run", 2, 10);  // ... and 10 times as a verb
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<WordNetCanonicalizer> Load() {
    wn_.Write(dir_);
    auto loaded = WordNetCanonicalizer::Load(dir_.string());
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    return loaded.ok() ? *std::move(loaded) : nullptr;
  }

  MiniWordNet wn_;
  std::filesystem::path dir_;
};

TEST_F(MiniWordNetTest, RepresentativeIsFirstSingleWordLemma) {
  auto wn = Load();
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->Canonicalize("automobile"), "auto");
  EXPECT_EQ(wn->Canonicalize("auto"), "auto");
  EXPECT_EQ(wn->Canonicalize("gelato"), "ice_cream");
  EXPECT_EQ(wn->Canonicalize("better"), "good");  // adjective marker "(a)" stripped
}

TEST_F(MiniWordNetTest, MorphologyUsesExceptionsAndDetachmentRules) {
  auto wn = Load();
  ASSERT_NE(wn, nullptr);
  EXPECT_THAT(wn->BaseForms("mice", WordNetPos::kNoun), ElementsAre("mouse"));
  EXPECT_THAT(wn->BaseForms("autos", WordNetPos::kNoun), ElementsAre("auto"));
  EXPECT_THAT(wn->BaseForms("running", WordNetPos::kVerb), IsEmpty());  // "runn" is no lemma
  EXPECT_THAT(wn->BaseForms("sprinting", WordNetPos::kVerb), ElementsAre("sprint"));
  EXPECT_THAT(wn->BaseForms("ran", WordNetPos::kVerb), ElementsAre("run"));
  EXPECT_EQ(wn->Canonicalize("mice"), "mouse");
  EXPECT_EQ(wn->Canonicalize("autos"), "auto");
  EXPECT_EQ(wn->Canonicalize("automobiles"), "auto");
}

TEST_F(MiniWordNetTest, MostTaggedPartOfSpeechWinsThenFirstSense) {
  auto wn = Load();
  ASSERT_NE(wn, nullptr);
  // Verb "run" (10 tags) beats noun "run" (3); its first verb sense is {run}.
  EXPECT_EQ(wn->Canonicalize("run"), "run");
  EXPECT_EQ(wn->Canonicalize("ran"), "run");
  // "sprint" has no counts at all: its only candidate is the verb, first sense {dash, ...}.
  EXPECT_EQ(wn->Canonicalize("sprint"), "dash");
}

TEST_F(MiniWordNetTest, TieGoesToNoun) {
  wn_ = MiniWordNet();
  const long bark_noun = wn_.AddSynset("noun", {"bark"});
  const long bark_verb = wn_.AddSynset("verb", {"bay", "bark"});
  wn_.AddIndex("noun", "bark", {bark_noun});
  wn_.AddIndex("verb", "bark", {bark_verb});
  auto wn = Load();
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->Canonicalize("bark"), "bark");
  EXPECT_EQ(wn->BaseForms("barks", WordNetPos::kVerb), std::vector<std::string>{"bark"});
}

TEST_F(MiniWordNetTest, StopwordsUnknownAndNonAlphabeticWordsStayAsTheyAre) {
  auto wn = Load();
  ASSERT_NE(wn, nullptr);
  EXPECT_EQ(wn->Canonicalize("in"), "in");  // listed in index.noun, but a stopword
  EXPECT_EQ(wn->Canonicalize("zyzzyva"), "zyzzyva");
  EXPECT_EQ(wn->Canonicalize("auto3"), "auto3");
  EXPECT_EQ(wn->Canonicalize("x"), "x");
  EXPECT_EQ(wn->Canonicalize(""), "");
  EXPECT_EQ(wn->Canonicalize(std::string(200, 'a')), std::string(200, 'a'));
}

TEST_F(MiniWordNetTest, MissingFileIsNotFound) {
  wn_.Write(dir_);
  std::filesystem::remove(dir_ / "cntlist.rev");
  EXPECT_EQ(WordNetCanonicalizer::CheckDataPresent(dir_.string()).code(), absl::StatusCode::kNotFound);
  auto loaded = WordNetCanonicalizer::Load(dir_.string());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(loaded.status().message(), HasSubstr("cntlist.rev"));
}

TEST_F(MiniWordNetTest, OffsetIntoTheMiddleOfARecordIsDataLoss) {
  const long mouse = wn_.AddSynset("noun", {"rodent"});
  wn_.AddIndex("noun", "rodent", {mouse + 3});
  wn_.Write(dir_);
  auto loaded = WordNetCanonicalizer::Load(dir_.string());
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(loaded.status().message(), HasSubstr("data.noun"));
}

TEST_F(MiniWordNetTest, OffsetPastTheEndOfTheDataFileIsDataLoss) {
  wn_.AddIndex("noun", "phantom", {99999999});
  wn_.Write(dir_);
  EXPECT_EQ(WordNetCanonicalizer::Load(dir_.string()).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(MiniWordNetTest, TruncatedIndexLineIsDataLoss) {
  wn_.Write(dir_);
  std::ofstream(dir_ / "index.verb", std::ios::app) << "walk v 1 5 @\n";
  EXPECT_EQ(WordNetCanonicalizer::Load(dir_.string()).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(MiniWordNetTest, MalformedCountLineIsDataLoss) {
  wn_.Write(dir_);
  std::ofstream(dir_ / "cntlist.rev", std::ios::app) << "run%9:03:00:: 1 4\n";
  EXPECT_EQ(WordNetCanonicalizer::Load(dir_.string()).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(MiniWordNetTest, DigestCoversEveryFile) {
  auto first = Load();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->data_digest().size(), 64u);
  std::ofstream(dir_ / "adv.exc", std::ios::app) << "bestest best\n";
  auto second = WordNetCanonicalizer::Load(dir_.string());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_NE(first->data_digest(), (*second)->data_digest());
}

TEST_F(MiniWordNetTest, SharedLoadsOncePerDirectoryAcrossThreads) {
  wn_.Write(dir_);
  std::vector<const WordNetCanonicalizer*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto shared = WordNetCanonicalizer::Shared(dir_.string());
      if (shared.ok()) seen[i] = shared->get();
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_NE(seen[0], nullptr);
  for (const auto* p : seen) EXPECT_EQ(p, seen[0]);
  // The same directory spelled differently maps to the same instance.
  auto again = WordNetCanonicalizer::Shared((dir_ / "." / "").string());
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->get(), seen[0]);
}

TEST(StopwordTest, FunctionWordsAreStopwords) {
  for (const char* w : {"a", "is", "in", "it", "the", "who", "will", "us", "i"}) {
    EXPECT_TRUE(WordNetCanonicalizer::IsStopword(w)) << w;
  }
  for (const char* w : {"car", "run", "mouse", ""}) {
    EXPECT_FALSE(WordNetCanonicalizer::IsStopword(w)) << w;
  }
}

// The real database, as shipped by Debian's wordnet-base.
class RealWordNetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir(WordNetCanonicalizer::kDefaultDir);
    if (!WordNetCanonicalizer::CheckDataPresent(dir).ok()) {
      GTEST_SKIP() << "WordNet data not installed at " << dir;
    }
    auto shared = WordNetCanonicalizer::Shared(dir);
    ASSERT_TRUE(shared.ok()) << shared.status();
    wn_ = *shared;
  }
  std::shared_ptr<const WordNetCanonicalizer> wn_;
};

TEST_F(RealWordNetTest, SynonymsShareARepresentative) {
  EXPECT_EQ(wn_->Canonicalize("car"), "car");
  EXPECT_EQ(wn_->Canonicalize("automobile"), "car");
  EXPECT_EQ(wn_->Canonicalize("cars"), "car");
  EXPECT_EQ(wn_->Canonicalize("buy"), "buy");
  EXPECT_EQ(wn_->Canonicalize("bought"), "buy");
  EXPECT_EQ(wn_->Canonicalize("purchased"), "buy");
  EXPECT_EQ(wn_->Canonicalize("disregard"), wn_->Canonicalize("ignore"));
  EXPECT_EQ(wn_->Canonicalize("big"), wn_->Canonicalize("large"));
}

TEST_F(RealWordNetTest, MorphologicalBaseForms) {
  EXPECT_EQ(wn_->Canonicalize("running"), "run");
  EXPECT_EQ(wn_->Canonicalize("ran"), "run");
  EXPECT_EQ(wn_->Canonicalize("mice"), "mouse");
  EXPECT_EQ(wn_->Canonicalize("children"), "child");
  EXPECT_EQ(wn_->Canonicalize("geese"), "goose");
  std::vector<std::string> running = wn_->BaseForms("running", WordNetPos::kVerb);
  EXPECT_THAT(running, ::testing::Contains("run"));
  EXPECT_THAT(wn_->BaseForms("mice", WordNetPos::kNoun), ElementsAre("mouse"));
  EXPECT_THAT(wn_->BaseForms("better", WordNetPos::kAdj), ::testing::Contains("good"));
}

TEST_F(RealWordNetTest, FunctionWordsAreNotMappedIntoSynsets) {
  // WordNet lists these as nouns (vitamin A, inch, information technology, iodine).
  for (const char* w : {"a", "in", "it", "i", "is", "who", "will"}) {
    EXPECT_EQ(wn_->Canonicalize(w), w);
  }
}

TEST_F(RealWordNetTest, UnknownWordsAreUnchanged) {
  EXPECT_EQ(wn_->Canonicalize("qwzxvbn"), "qwzxvbn");
  EXPECT_EQ(wn_->Canonicalize("kubernetes"), "kubernetes");
  EXPECT_GT(wn_->lemma_count(), 50000u);
}

}  // namespace
}  // namespace bulwark
