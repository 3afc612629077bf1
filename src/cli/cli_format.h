// Small text formats shared by the `bulwark` subcommands' human-readable output.
#pragma once

#include <cstdint>
#include <ctime>
#include <iomanip>
#include <sstream>
#include <string>

namespace bulwark::cli {

// Microseconds since the epoch as an ISO 8601 UTC time to the second, e.g. 2026-11-24T03:00:00Z.
inline std::string FormatTime(int64_t micros) {
  std::time_t seconds = static_cast<std::time_t>(micros / 1'000'000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  std::ostringstream s;
  s << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return s.str();
}

}  // namespace bulwark::cli
