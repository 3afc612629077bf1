// ParallelFor: runs fn(begin, end) over contiguous slices of [0, n) on up to `max_threads`
// threads (the caller's thread takes the first slice) and returns the first error, if any.
#pragma once

#include <absl/status/status.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#include "core/status_macros.h"

namespace bulwark {

inline absl::Status ParallelFor(size_t n, size_t max_threads,
                                const std::function<absl::Status(size_t begin, size_t end)>& fn) {
  const size_t threads = std::max<size_t>(1, std::min(max_threads, n));
  if (threads == 1) return n ? fn(0, n) : absl::OkStatus();
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> workers;
  const size_t slice = (n + threads - 1) / threads;
  for (size_t t = 1; t < threads; ++t) {
    size_t begin = std::min(n, t * slice), end = std::min(n, begin + slice);
    workers.emplace_back([&, t, begin, end] { results[t] = fn(begin, end); });
  }
  results[0] = fn(0, std::min(n, slice));
  for (auto& w : workers) w.join();
  for (const auto& r : results) {
    BULWARK_RETURN_IF_ERROR(r);
  }
  return absl::OkStatus();
}

}  // namespace bulwark
