// Process metrics from /proc and getrusage (see process_metrics.h).
#include "server/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#ifndef BULWARK_VERSION_STRING
#define BULWARK_VERSION_STRING "unknown"
#endif

namespace bulwark::server {
namespace {

// Seconds since the epoch at which this process started: boot time (/proc/stat btime) plus the
// process's start in clock ticks after boot (/proc/self/stat field 22).
bool StartTimeSeconds(double* out) {
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  const size_t after_name = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (after_name == std::string::npos) return false;
  std::istringstream fields(stat.substr(after_name + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i != 22) continue;
    std::ifstream boot("/proc/stat");
    std::string key;
    long long btime = -1;
    while (boot >> key) {
      if (key == "btime") {
        boot >> btime;
        break;
      }
    }
    const long ticks = sysconf(_SC_CLK_TCK);
    if (btime < 0 || ticks <= 0) return false;
    *out = static_cast<double>(btime) + std::stod(field) / static_cast<double>(ticks);
    return true;
  }
  return false;
}

}  // namespace

std::vector<Sample> ProcessSamples() {
  std::vector<Sample> samples;
  samples.push_back({"bulwark_build_info", "Always 1; the version of this build in its label.", "gauge", 1,
                     "version=\"" BULWARK_VERSION_STRING "\""});
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) {
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    samples.push_back(
        {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", cpu});
  }
  std::ifstream statm("/proc/self/statm");
  long long pages_virtual = 0, pages_resident = 0;
  if (statm >> pages_virtual >> pages_resident) {
    const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
    samples.push_back({"process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge",
                       static_cast<double>(pages_virtual) * page});
    samples.push_back({"process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
                       static_cast<double>(pages_resident) * page});
  }
  std::error_code ec;
  size_t fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec)
    samples.push_back(
        {"process_open_fds", "Number of open file descriptors.", "gauge", static_cast<double>(fds)});
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    samples.push_back({"process_max_fds", "Maximum number of open file descriptors.", "gauge",
                       static_cast<double>(limit.rlim_cur)});
  }
  double start = 0;
  if (StartTimeSeconds(&start)) {
    samples.push_back({"process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                       "gauge", start});
  }
  return samples;
}

}  // namespace bulwark::server
