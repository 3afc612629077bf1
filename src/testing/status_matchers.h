// GoogleMock matchers for absl::Status and absl::StatusOr (Debian's 2022 Abseil predates
// absl/status/status_matchers.h). A failing match prints the status, so a failed
// `ASSERT_THAT(store->Add(...), IsOk())` says why.
//
//   EXPECT_THAT(store->Get("ns", id), IsOk());
//   EXPECT_THAT(store->Get("ns", "missing"), StatusIs(absl::StatusCode::kNotFound));
//   EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("text is empty")));
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <gmock/gmock.h>

#include <ostream>
#include <string>

namespace bulwark::testing {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = ::bulwark::testing::GetStatus(arg);
  if (!status.ok()) *result_listener << "whose status is " << status;
  return status.ok();
}

MATCHER_P(StatusIs, code, "has status code " + ::testing::PrintToString(code)) {
  const absl::Status& status = ::bulwark::testing::GetStatus(arg);
  *result_listener << "whose status is " << status;
  return status.code() == code;
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has status code " + ::testing::PrintToString(code) + " and a message that " +
               ::testing::DescribeMatcher<std::string>(message_matcher)) {
  const absl::Status& status = ::bulwark::testing::GetStatus(arg);
  *result_listener << "whose status is " << status;
  return status.code() == code && ::testing::Matches(message_matcher)(std::string(status.message()));
}

}  // namespace bulwark::testing
