// The adversarial runner: each file in tests/adversarial/cases/ is one attack scripted as HTTP
// steps with expectations (case_runner.h), run against its own real `bulwark serve` on 127.0.0.1
// with a fresh store, bounded to 60 s per case. Adding an attack is adding a data file.
#include <gtest/gtest.h>

#include <algorithm>

#include "adversarial/case_runner.h"
#include "service_harness.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

std::vector<std::filesystem::path> CaseFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(BULWARK_ADVERSARIAL_CASES)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class AdversarialCaseTest : public ::testing::TestWithParam<std::filesystem::path> {};

TEST_P(AdversarialCaseTest, EveryExpectationHolds) {
  std::string error;
  const nlohmann::json test_case = testing::LoadCase(GetParam(), &error);
  ASSERT_FALSE(test_case.is_null()) << error;
  testing::TempDir dir;
  auto server = testing::ServerProcess::Start(dir / "store", {});
  ASSERT_NE(server, nullptr) << "server did not start";
  ASSERT_TRUE(server->admin_key().has_value());
  auto client = server->Client();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  const std::vector<std::string> failures =
      testing::RunCase(test_case, *client, *server->admin_key(), deadline);
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_TRUE(failures.empty()) << test_case.value("description", "");
}

TEST(AdversarialCasesTest, ThereAreCases) { EXPECT_GE(CaseFiles().size(), 3u); }

INSTANTIATE_TEST_SUITE_P(Cases, AdversarialCaseTest, ::testing::ValuesIn(CaseFiles()),
                         [](const ::testing::TestParamInfo<std::filesystem::path>& info) {
                           std::string name = info.param.stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace bulwark
