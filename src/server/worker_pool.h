// WorkerPool: the threads that run the server's request handlers, with a bounded queue. The
// connection loop (connection_loop.h) hands it only complete requests; a slow or idle client
// never occupies a worker. When every worker is busy and `max_queued` requests already wait,
// TrySubmit refuses and the loop answers 503 at once: overload becomes a fast refusal, not a
// growing queue.
#pragma once

#include <absl/base/thread_annotations.h>
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

namespace bulwark::server {

class WorkerPool {
 public:
  // threads >= 1 workers; max_queued >= 0 jobs waiting for a worker.
  WorkerPool(int threads, int max_queued);
  ~WorkerPool();  // Shutdown()

  // Queues `job` if a worker is idle or fewer than max_queued jobs wait, and returns true; returns
  // false (and drops the job) otherwise, or after Shutdown.
  [[nodiscard]] bool TrySubmit(std::function<void()> job);
  // Runs the jobs already queued, then joins every worker. Idempotent.
  void Shutdown();

  int64_t active() const { return active_.load(std::memory_order_relaxed); }  // jobs running
  int64_t queued() const { return queued_.load(std::memory_order_relaxed); }  // jobs waiting

 private:
  void WorkerLoop();

  const int64_t thread_count_;
  const size_t max_queued_;
  std::atomic<int64_t> active_{0};
  std::atomic<int64_t> queued_{0};
  absl::Mutex mu_;
  absl::CondVar work_cv_;  // a job was queued, or Shutdown
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  int64_t running_ ABSL_GUARDED_BY(mu_) = 0;  // jobs taken by a worker and not finished
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace bulwark::server
