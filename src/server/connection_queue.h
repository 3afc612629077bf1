// ConnectionQueue: the server's worker pool, with a bounded queue. httplib hands every accepted
// connection to a TaskQueue; a worker then serves that connection's keep-alive requests until it
// closes. httplib's own ThreadPool queues without limit, so a flood of connections would grow
// memory without bound. This queue instead keeps at most `max_queued` connections waiting for a
// worker; any connection beyond that is *shed*: served by a separate shed thread on which
// ServingShedConnection() is true, so the request handler answers 503 at once (with
// `Connection: close`) instead of doing work. If even the shed thread is backed up, the accepting
// thread serves the shed connection itself, which slows accepting: back-pressure into the kernel's
// listen backlog rather than memory growth.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace bulwark::server {

// Live counters, owned by the server and sampled by /metrics.
struct ConnectionQueueStats {
  std::atomic<int64_t> active{0};      // connections being served by a worker
  std::atomic<int64_t> queued{0};      // connections waiting for a worker
  std::atomic<int64_t> shed_total{0};  // connections answered 503 because the queue was full
};

class ConnectionQueue : public httplib::TaskQueue {
 public:
  // threads >= 1 workers; max_queued >= 0 waiting connections. `stats` must outlive the queue.
  ConnectionQueue(int threads, int max_queued, ConnectionQueueStats* stats);
  ~ConnectionQueue() override;

  void enqueue(std::function<void()> fn) override;
  // Serves what is queued, then joins every thread. Idempotent.
  void shutdown() override;

  // True while the calling thread serves a shed connection.
  static bool ServingShedConnection();

 private:
  static constexpr size_t kMaxShedQueue = 64;
  void WorkerLoop();
  void ShedLoop();

  const int64_t thread_count_;
  const size_t max_queued_;
  ConnectionQueueStats* stats_;
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::condition_variable shed_cv_;
  std::deque<std::function<void()>> jobs_;       // guarded by mu_
  std::deque<std::function<void()>> shed_jobs_;  // guarded by mu_
  bool shutdown_ = false;                        // guarded by mu_
  std::vector<std::thread> workers_;
  std::thread shed_thread_;
};

}  // namespace bulwark::server
