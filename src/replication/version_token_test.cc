// VersionToken: round trips and bounded, strict parsing of untrusted tokens.
#include "replication/version_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;

TEST(VersionTokenTest, RoundTrips) {
  for (const VersionToken& t :
       {VersionToken{"default", 1}, VersionToken{"team/a.b c", 9223372036854775807},
        VersionToken{std::string("\xff\x00z", 3), 42}, VersionToken{std::string(256, 'n'), 7}}) {
    const std::string text = t.Encode();
    EXPECT_LE(text.size(), kMaxVersionTokenBytes);
    EXPECT_EQ(text.find_first_of(" /+=\n"), std::string::npos) << text << ": safe in a header or a URL";
    auto back = VersionToken::Decode(text);
    ASSERT_THAT(back, IsOk()) << text;
    EXPECT_EQ(*back, t);
  }
}

TEST(VersionTokenTest, MalformedTokensAreRefused) {
  const std::string good = VersionToken{"default", 12}.Encode();
  ASSERT_THAT(VersionToken::Decode(good), IsOk());
  for (const std::string& bad :
       {std::string(), std::string("bw1"), std::string("bw1.ZGVmYXVsdA"), std::string("bw2.ZGVmYXVsdA.12"),
        std::string("bw1..12"), std::string("bw1.ZGVmYXVsdA.0"), std::string("bw1.ZGVmYXVsdA.-1"),
        std::string("bw1.ZGVmYXVsdA.+1"), std::string("bw1.ZGVmYXVsdA.1x"), std::string("bw1.ZGVmYXVsdA. 1"),
        std::string("bw1.ZGVmYXVsdA.9223372036854775808"), std::string("bw1.ZGVmYXVsdA.00000000000000000001"),
        std::string("bw1.ZGVm*XVsdA.12"), std::string("bw1.ZGVmYXVsdA.12.3"), good + "\n",
        std::string("bw1.") + std::string(400, 'A') + ".1", std::string(kMaxVersionTokenBytes + 1, 'a')}) {
    EXPECT_THAT(VersionToken::Decode(bad), StatusIs(absl::StatusCode::kInvalidArgument)) << bad;
  }
}

}  // namespace
}  // namespace bulwark
