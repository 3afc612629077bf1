// Drives the CLI in-process through cli::Run, as a user would from the shell.
#include "cli/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_util.h"
#include "testing/temp_dir.h"

namespace bulwark::cli {
namespace {

using ::testing::HasSubstr;

using Result = CliResult;

class CliTest : public ::testing::Test {
 protected:
  Result Cli(const std::vector<std::string>& args) { return RunCli(dir_ / "store", args); }
  void Init() { ASSERT_EQ(Cli({"init", "--no-synonyms"}).code, 0); }
  testing::TempDir dir_;
};

TEST_F(CliTest, WalkthroughInitAddSearchVerify) {
  Result init = Cli({"init", "--no-synonyms", "--json"});
  ASSERT_EQ(init.code, 0) << init.err;
  EXPECT_THAT(init.json()["embedder"].get<std::string>(), HasSubstr("lexical/384/"));

  Result added = Cli({"add", "Alice's flight to Lisbon leaves at 9:40 on Tuesday", "-m",
                      R"({"category":"calendar"})", "--json"});
  ASSERT_EQ(added.code, 0) << added.err;
  std::string id = added.json()["id"];
  Cli({"add", "Remember to renew the car insurance in March"});

  Result search = Cli({"search", "when does the Lisbon flight leave", "-k", "1", "--json"});
  ASSERT_EQ(search.code, 0) << search.err;
  ASSERT_EQ(search.json()["hits"].size(), 1u);
  EXPECT_EQ(search.json()["hits"][0]["id"], id);
  EXPECT_EQ(search.json()["hits"][0]["metadata"]["category"], "calendar");

  Result human = Cli({"search", "Lisbon flight"});
  EXPECT_THAT(human.out, HasSubstr("Lisbon"));

  Result verify = Cli({"verify", "--json"});
  EXPECT_EQ(verify.code, 0);
  EXPECT_EQ(verify.json()["rows_checked"], 2);
  EXPECT_TRUE(verify.json()["ok"].get<bool>());

  Result stats = Cli({"stats", "--json"});
  EXPECT_EQ(stats.json()["namespaces"][0]["active"], 2);
}

TEST_F(CliTest, IndexSnapshotIsLeftAtCloseUnlessTurnedOff) {
  Init();
  const std::filesystem::path snapshot = dir_ / "store" / "index.snap";
  ASSERT_EQ(Cli({"--index-snapshot-min-rows", "1", "add", "The garden hose is in the shed"}).code, 0);
  EXPECT_TRUE(std::filesystem::exists(snapshot));
  Result search = Cli({"--index-snapshot-min-rows", "1", "search", "garden hose", "-k", "1", "--json"});
  ASSERT_EQ(search.code, 0) << search.err;
  ASSERT_EQ(search.json()["hits"].size(), 1u);
  EXPECT_THAT(search.json()["hits"][0]["text"].get<std::string>(), HasSubstr("shed"));

  std::filesystem::remove(snapshot);
  ASSERT_EQ(Cli({"--index-snapshot-min-rows", "-1", "add", "The ladder is in the garage"}).code, 0);
  EXPECT_FALSE(std::filesystem::exists(snapshot));
  Result bad = Cli({"--index-snapshot-min-rows", "many", "search", "ladder"});
  EXPECT_NE(bad.code, 0);
  EXPECT_FALSE(std::filesystem::exists(snapshot));
}

TEST_F(CliTest, ImportIsOneBatchAndABadLineImportsNothing) {
  Init();
  {
    std::ofstream f(dir_ / "good.jsonl");
    for (int i = 0; i < 30; ++i)
      f << R"({"text": "imported memory )" << i << R"(", "metadata": {"i": )" << i << "}}\n";
  }
  {
    std::ofstream f(dir_ / "bad.jsonl");
    f << R"({"text": "fine"})"
      << "\n"
      << R"({"text": "oops", "colour": "red"})"
      << "\n";
  }
  Result bad = Cli({"add", "--file", (dir_ / "bad.jsonl").string()});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("line 2"));
  EXPECT_THAT(bad.err, HasSubstr("nothing was imported"));
  EXPECT_EQ(Cli({"stats", "--json"}).json()["namespaces"].size(), 0u);

  Result good = Cli({"-n", "imports", "add", "--file", (dir_ / "good.jsonl").string(), "--json"});
  ASSERT_EQ(good.code, 0) << good.err;
  EXPECT_EQ(good.json()["added"], 30);
  Result exported = Cli({"-n", "imports", "export"});
  EXPECT_EQ(std::count(exported.out.begin(), exported.out.end(), '\n'), 30);
  EXPECT_THAT(exported.out, HasSubstr("imported memory 17"));
}

TEST_F(CliTest, GetHistoryDeletePurge) {
  Init();
  std::string id = Cli({"add", "the wifi password is hunter2", "--json"}).json()["id"];
  Result get = Cli({"get", id});
  EXPECT_EQ(get.code, 0);
  EXPECT_THAT(get.out, HasSubstr("hunter2"));
  EXPECT_EQ(Cli({"delete", id}).code, 0);
  EXPECT_EQ(Cli({"search", "wifi password", "--json"}).json()["hits"].size(), 0u);
  EXPECT_EQ(Cli({"purge", id}).code, 0);
  Result history = Cli({"history", id, "--json"});
  ASSERT_EQ(history.code, 0);
  EXPECT_EQ(history.json()["events"].size(), 3u);
  EXPECT_THAT(history.out, ::testing::Not(HasSubstr("hunter2")));
  EXPECT_EQ(history.json()["events"][2]["event"], "purge");
}

TEST_F(CliTest, ClearErrorsForBadInput) {
  Init();
  Result empty = Cli({"add", ""});
  EXPECT_EQ(empty.code, 1);
  EXPECT_THAT(empty.err, HasSubstr("text is empty"));
  Result ns = Cli({"-n", "../etc", "add", "x"});
  EXPECT_EQ(ns.code, 1);
  EXPECT_THAT(ns.err, HasSubstr("namespace"));
  Result big = Cli({"--max-text-bytes", "10", "add", "this text is longer than ten bytes"});
  EXPECT_EQ(big.code, 1);
  EXPECT_THAT(big.err, HasSubstr("limit is 10"));
  Result utf8 = Cli({"add", "bad \xc3\x28 byte"});
  EXPECT_EQ(utf8.code, 1);
  EXPECT_THAT(utf8.err, HasSubstr("UTF-8"));
  Result meta = Cli({"add", "x", "-m", "[1]"});
  EXPECT_EQ(meta.code, 1);
  Result missing = Cli({"get", "01ARZ3NDEKTSV4RRFFQ69G5FAV"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no entry"));
  EXPECT_EQ(Cli({"frobnicate"}).code, 2);
  EXPECT_EQ(Cli({"stats", "--json"}).json()["namespaces"].size(), 0u);
}

TEST_F(CliTest, KeysRotateAndList) {
  Init();
  std::string first = Cli({"add", "signed with key one", "--json"}).json()["id"];
  Result rotated = Cli({"keys", "rotate", "--json"});
  ASSERT_EQ(rotated.code, 0) << rotated.err;
  EXPECT_EQ(rotated.json()["key_id"], 2);
  Result listed = Cli({"keys", "list", "--json"});
  ASSERT_EQ(listed.json()["keys"].size(), 2u);
  EXPECT_TRUE(listed.json()["keys"][1]["newest"].get<bool>());
  EXPECT_EQ(listed.out.find("\"key\""), std::string::npos) << "key material must never be printed";
  Result second = Cli({"add", "signed with key two", "--json"});
  EXPECT_EQ(second.json()["key_id"], 2);
  EXPECT_EQ(Cli({"get", first, "--json"}).json()["key_id"], 1);
  EXPECT_EQ(Cli({"verify"}).code, 0);
  EXPECT_EQ(Cli({"keys", "create"}).code, 1) << "create must not overwrite an existing keyring";
}

TEST_F(CliTest, OpeningWithoutInitSaysSo) {
  Result r = Cli({"search", "anything"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("bulwark init"));
}

}  // namespace
}  // namespace bulwark::cli
