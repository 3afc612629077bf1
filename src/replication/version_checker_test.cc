// VersionChecker on hand-made sequences: what it must accept and each fault it must report.
#include "replication/version_checker.h"

#include <gtest/gtest.h>

namespace bulwark {
namespace {

VersionReport Check(VersionChecker::Mode mode, std::initializer_list<std::pair<int64_t, const char*>> seen) {
  VersionChecker checker(mode);
  for (const auto& [v, ns] : seen) checker.Observe(v, ns);
  return checker.report();
}

using Mode = VersionChecker::Mode;

TEST(VersionCheckerTest, AcceptsGapFreeOrderedVersions) {
  const VersionReport r = Check(Mode::kWholeStore, {{1, "a"}, {2, "b"}, {3, "a"}, {4, "a"}});
  EXPECT_TRUE(r.ok()) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_EQ(r.events, 4);
  EXPECT_EQ(r.last_version, 4);
}

TEST(VersionCheckerTest, ReportsAGapInTheWholeStore) {
  const VersionReport r = Check(Mode::kWholeStore, {{1, "a"}, {2, "b"}, {5, "a"}});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.gaps, 2);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_EQ(r.problems[0], "versions 3..4 are missing");
  EXPECT_EQ(Check(Mode::kWholeStore, {{2, "a"}}).gaps, 1) << "version 1 is missing";
}

TEST(VersionCheckerTest, ASubsequenceMaySkipOtherNamespacesButNotGoBack) {
  EXPECT_TRUE(Check(Mode::kSubsequence, {{3, "a"}, {7, "b"}, {9, "a"}}).ok());
  const VersionReport back = Check(Mode::kSubsequence, {{3, "a"}, {9, "b"}, {7, "a"}});
  EXPECT_EQ(back.reorderings, 1);
  const VersionReport twice = Check(Mode::kSubsequence, {{3, "a"}, {3, "a"}});
  EXPECT_EQ(twice.duplicates, 1);
  EXPECT_FALSE(twice.ok());
}

TEST(VersionCheckerTest, KeepsOnlyTheFirstProblems) {
  VersionChecker checker(Mode::kWholeStore);
  for (int64_t v = 2; v < 200; v += 2) checker.Observe(v, "a");
  EXPECT_EQ(checker.report().gaps, 99);
  EXPECT_EQ(checker.report().problems.size(), VersionChecker::kMaxProblems);
}

}  // namespace
}  // namespace bulwark
