// Worker threads with a bounded job queue (see worker_pool.h).
#include "server/worker_pool.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>

namespace bulwark::server {

WorkerPool::WorkerPool(int threads, int max_queued)
    : thread_count_(std::max(1, threads)), max_queued_(static_cast<size_t>(std::max(0, max_queued))) {
  for (int64_t i = 0; i < thread_count_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

WorkerPool::~WorkerPool() { Shutdown(); }

bool WorkerPool::TrySubmit(std::function<void()> job) {
  {
    absl::MutexLock lock(&mu_);
    // Admit while a worker is free (not running nor claimed by a queued job), or the queue has room.
    const bool worker_free = running_ + static_cast<int64_t>(jobs_.size()) < thread_count_;
    if (shutdown_ || (!worker_free && jobs_.size() >= max_queued_)) return false;
    jobs_.push_back(std::move(job));
    queued_.fetch_add(1, std::memory_order_relaxed);
  }
  work_cv_.Signal();
  return true;
}

void WorkerPool::WorkerLoop() {
  std::function<void()> job;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (job) --running_;  // the previous one
      while (!shutdown_ && jobs_.empty()) work_cv_.Wait(&mu_);
      if (jobs_.empty()) return;  // shut down and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
      queued_.fetch_sub(1, std::memory_order_relaxed);
      active_.fetch_add(1, std::memory_order_relaxed);
    }
    job();
    active_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void WorkerPool::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    shutdown_ = true;
  }
  work_cv_.SignalAll();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

}  // namespace bulwark::server
