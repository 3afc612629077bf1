// traceparent: well-formed headers are kept (only their first four fields), anything else ignored.
#include "server/trace_context.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bulwark::server {
namespace {

TEST(TraceContextTest, KeepsOnlyWellFormedTraceParents) {
  const std::string good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  EXPECT_EQ(ValidTraceParent(good), good);
  EXPECT_EQ(ValidTraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"),
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
      << "a later version: its first fields";
  for (const std::string& bad : std::vector<std::string>{
           std::string(""),
           good + "-x",                                                // version 00 has no more fields
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero parent id
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // forbidden version
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",     // no flags
           "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0\n",
           "00-<script>alert(1)</script>0000000000-00f067aa0ba902b7-01",
       }) {
    EXPECT_FALSE(ValidTraceParent(bad).has_value()) << bad;
  }
  httplib::Request request;
  EXPECT_FALSE(TraceParentOf(request).has_value());
  request.headers.emplace("traceparent", good);
  EXPECT_EQ(TraceParentOf(request), good);
  request.headers.emplace("traceparent", good);
  EXPECT_FALSE(TraceParentOf(request).has_value()) << "two traceparent headers are ambiguous";
}

}  // namespace
}  // namespace bulwark::server
