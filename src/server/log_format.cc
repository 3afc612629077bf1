// JSON log lines through an spdlog custom flag (see log_format.h).
#include "server/log_format.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace bulwark::server {
namespace {

// OpenTelemetry SeverityNumber of each spdlog level (TRACE 1, DEBUG 5, INFO 9, WARN 13, ERROR 17,
// FATAL 21), and its SeverityText.
struct Severity {
  int number;
  const char* text;
};
Severity SeverityOf(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return {1, "TRACE"};
    case spdlog::level::debug:
      return {5, "DEBUG"};
    case spdlog::level::info:
      return {9, "INFO"};
    case spdlog::level::warn:
      return {13, "WARN"};
    case spdlog::level::err:
      return {17, "ERROR"};
    case spdlog::level::critical:
      return {21, "FATAL"};
    default:
      return {0, "UNSPECIFIED"};
  }
}

// %* -> the message as a JSON string body plus the severity fields.
class OtelFields : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const Severity severity = SeverityOf(msg.level);
    std::string out = "\"severity_text\":\"";
    out += severity.text;
    out += "\",\"severity_number\":";
    out += std::to_string(severity.number);
    out += ",\"body\":\"";
    for (const char c : std::string_view(msg.payload.data(), msg.payload.size())) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20) {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\u00";
        out += kHex[u >> 4];
        out += kHex[u & 15];
      } else {
        out += c;  // UTF-8 passes through; invalid bytes are the payload's own
      }
    }
    out += '"';
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<OtelFields>(); }
};

}  // namespace

absl::Status SetLogFormat(std::string_view format) {
  if (format == "text") {
    spdlog::set_pattern("%+");
    return absl::OkStatus();
  }
  if (format != "json") return absl::InvalidArgumentError("--log-format must be text or json");
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<OtelFields>('*').set_pattern(
      R"({"timestamp":"%Y-%m-%dT%H:%M:%S.%fZ",%*,"resource":{"service.name":"bulwark"}})");
  spdlog::set_formatter(std::move(formatter));
  return absl::OkStatus();
}

}  // namespace bulwark::server
