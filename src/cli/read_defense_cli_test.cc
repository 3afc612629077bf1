// The read-defense subcommands, driven in-process through cli::Run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/cli_test_util.h"

namespace bulwark::cli {
namespace {

using ::testing::HasSubstr;

class ReadDefenseCliTest : public ::testing::Test {
 protected:
  CliResult Cli(const std::vector<std::string>& args) { return RunCli(dir_ / "store", args); }
  testing::TempDir dir_;
};

TEST_F(ReadDefenseCliTest, CertificatePrintsDelta) {
  CliResult r = Cli({"certificate", "--m", "20", "--k", "5", "--t", "1", "--nruns", "5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("delta=0.103516"));

  CliResult j = Cli({"--json", "certificate", "--m", "11", "--k", "5", "--t", "1", "--nruns", "5"});
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NEAR(j.json()["delta"].get<double>(), 66875.0 / 161051.0, 1e-12);
  EXPECT_NEAR(j.json()["p_hit"].get<double>(), 5.0 / 11.0, 1e-12);
}

TEST_F(ReadDefenseCliTest, CertificateRefusesKAboveM) {
  CliResult r = Cli({"certificate", "--m", "4", "--k", "5"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("k must be between 1 and m"));
}

}  // namespace
}  // namespace bulwark::cli
