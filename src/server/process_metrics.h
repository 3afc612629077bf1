// Process metrics for /metrics (the names and meanings of the Prometheus client libraries'
// process collector, so existing dashboards work): resident and virtual memory, CPU seconds,
// open file descriptors and their limit, start time; plus bulwark_build_info. Linux (/proc).
#pragma once

#include <vector>

#include "server/metrics.h"

namespace bulwark::server {

// Samples of this process now. A value that cannot be read is left out, never reported as 0.
std::vector<Sample> ProcessSamples();

}  // namespace bulwark::server
