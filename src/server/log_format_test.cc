// --log-format json: one JSON object per line with OpenTelemetry field names, the message escaped.
#include "server/log_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace bulwark::server {
namespace {

TEST(LogFormatTest, JsonLinesCarryOtelFieldsAndAnEscapedBody) {
  std::ostringstream lines;
  auto previous = spdlog::default_logger();
  auto logger =
      std::make_shared<spdlog::logger>("test", std::make_shared<spdlog::sinks::ostream_sink_mt>(lines));
  spdlog::set_default_logger(logger);
  ASSERT_TRUE(SetLogFormat("json").ok());
  spdlog::warn("a \"quoted\" message\nwith a newline and a tab\t{}", 42);
  spdlog::error("second");
  spdlog::set_default_logger(previous);
  ASSERT_TRUE(SetLogFormat("text").ok());

  std::istringstream in(lines.str());
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const nlohmann::json first = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(first.is_object()) << line;
  EXPECT_EQ(first["body"], "a \"quoted\" message\nwith a newline and a tab\t42");
  EXPECT_EQ(first["severity_text"], "WARN");
  EXPECT_EQ(first["severity_number"], 13);
  EXPECT_EQ(first["resource"]["service.name"], "bulwark");
  EXPECT_THAT(first["timestamp"].get<std::string>(), ::testing::MatchesRegex("[0-9-]+T[0-9:.]+Z"));
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(nlohmann::json::parse(line)["severity_number"], 17);
  EXPECT_FALSE(SetLogFormat("xml").ok());
}

}  // namespace
}  // namespace bulwark::server
