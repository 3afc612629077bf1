// Worker pool with a bounded connection queue and a shed path (see connection_queue.h).
#include "server/connection_queue.h"

#include <algorithm>

namespace bulwark::server {
namespace {

thread_local bool t_serving_shed = false;

// Runs `fn` with the shed flag set on this thread.
void RunShed(const std::function<void()>& fn) {
  t_serving_shed = true;
  fn();
  t_serving_shed = false;
}

}  // namespace

ConnectionQueue::ConnectionQueue(int threads, int max_queued, ConnectionQueueStats* stats)
    : thread_count_(std::max(1, threads)),
      max_queued_(static_cast<size_t>(std::max(0, max_queued))),
      stats_(stats) {
  for (int i = 0; i < thread_count_; ++i) workers_.emplace_back([this] { WorkerLoop(); });
  shed_thread_ = std::thread([this] { ShedLoop(); });
}

ConnectionQueue::~ConnectionQueue() { shutdown(); }

bool ConnectionQueue::ServingShedConnection() { return t_serving_shed; }

void ConnectionQueue::enqueue(std::function<void()> fn) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Admit while a worker is idle, or while fewer than max_queued_ connections wait.
    const int64_t busy = stats_->active.load() + static_cast<int64_t>(jobs_.size());
    if (!shutdown_ && (jobs_.size() < max_queued_ || busy < thread_count_)) {
      jobs_.push_back(std::move(fn));
      stats_->queued.fetch_add(1);
      lock.unlock();
      work_cv_.notify_one();
      return;
    }
    stats_->shed_total.fetch_add(1);
    if (shed_jobs_.size() < kMaxShedQueue && !shutdown_) {
      shed_jobs_.push_back(std::move(fn));
      lock.unlock();
      shed_cv_.notify_one();
      return;
    }
  }
  RunShed(fn);  // the shed thread is backed up: serve it here, slowing the accept loop
}

void ConnectionQueue::WorkerLoop() {
  while (true) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return shutdown_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // shutdown_ and drained
      fn = std::move(jobs_.front());
      jobs_.pop_front();
      stats_->queued.fetch_sub(1);
      stats_->active.fetch_add(1);
    }
    fn();
    stats_->active.fetch_sub(1);
  }
}

void ConnectionQueue::ShedLoop() {
  while (true) {
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      shed_cv_.wait(lock, [this] { return shutdown_ || !shed_jobs_.empty(); });
      if (shed_jobs_.empty()) return;
      fn = std::move(shed_jobs_.front());
      shed_jobs_.pop_front();
    }
    RunShed(fn);
  }
}

void ConnectionQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutdown_ && workers_.empty()) return;
    shutdown_ = true;
  }
  work_cv_.notify_all();
  shed_cv_.notify_all();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
  if (shed_thread_.joinable()) shed_thread_.join();
}

}  // namespace bulwark::server
