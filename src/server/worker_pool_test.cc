// WorkerPool: admits while a worker is idle or the queue has room, refuses beyond, runs queued
// jobs on shutdown.
#include "server/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace bulwark::server {
namespace {

TEST(WorkerPoolTest, RefusesWhenWorkersBusyAndQueueFull) {
  WorkerPool pool(/*threads=*/2, /*max_queued=*/1);
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> started{0}, done{0};
  auto blocking = [&] {
    started.fetch_add(1);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    done.fetch_add(1);
  };
  ASSERT_TRUE(pool.TrySubmit(blocking));
  ASSERT_TRUE(pool.TrySubmit(blocking));
  for (int i = 0; i < 500 && started.load() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_EQ(started.load(), 2);
  EXPECT_EQ(pool.active(), 2);
  EXPECT_TRUE(pool.TrySubmit(blocking)) << "one may wait";
  EXPECT_EQ(pool.queued(), 1);
  EXPECT_FALSE(pool.TrySubmit(blocking)) << "workers busy and queue full";
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  pool.Shutdown();
  EXPECT_EQ(done.load(), 3) << "queued jobs run before shutdown returns";
  EXPECT_FALSE(pool.TrySubmit([] {})) << "nothing after shutdown";
}

TEST(WorkerPoolTest, ZeroQueueStillAdmitsToIdleWorkers) {
  WorkerPool pool(/*threads=*/1, /*max_queued=*/0);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100 && ran.load() == 0; ++i) {
    if (pool.TrySubmit([&] { ran.fetch_add(1); })) break;  // the worker may not be waiting yet
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pool.Shutdown();
  EXPECT_EQ(ran.load(), 1);
}

}  // namespace
}  // namespace bulwark::server
