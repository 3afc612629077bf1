// An acknowledged write survives a crash of the service: writer threads stream POSTs (single
// entries and batches) at a real `bulwark serve`, the server is SIGKILLed mid-stream, restarted on
// the same store, and every write that got a 2xx answer must be there, verified, and every batch
// whole or absent. Bounded: 3 rounds; each writer sends at most 150 requests per round, and the
// kill comes after 20-100 acknowledged single writes (or 3 s), while the writers are still going.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "service_harness.h"
#include "testing/temp_dir.h"

namespace bulwark {
namespace {

using nlohmann::json;
using testing::Answer;
using testing::SendJson;
using testing::ServerProcess;

constexpr int kRequestsPerWriter = 150;

struct Acks {
  std::mutex mu;
  std::atomic<int> singles_this_round{0};
  std::set<std::string> ids;                                // acknowledged single writes
  std::map<std::string, std::vector<std::string>> batches;  // acknowledged batch tag -> ids
  std::set<std::string> attempted_batches;                  // every batch tag sent, acknowledged or not
};

// Writes until the server stops answering or `stop` is set; records every 2xx.
void WriteStream(const ServerProcess& server, const std::string& key, int writer, bool batches,
                 std::atomic<bool>& stop, Acks& acks) {
  auto client = server.Client(/*keep_alive=*/true);
  client->set_read_timeout(2, 0);
  for (int i = 0; i < kRequestsPerWriter && !stop.load(); ++i) {
    json body;
    std::string tag;
    if (batches) {
      tag = "w" + std::to_string(writer) + "-" + std::to_string(i) + "-" + std::to_string(server.pid());
      body = {{"namespace", "crash"}, {"entries", json::array()}};
      for (int j = 0; j < 5; ++j) {
        body["entries"].push_back(
            {{"text", "batch " + tag + " item " + std::to_string(j) + " about the garden"},
             {"metadata", {{"batch", tag}}}});
      }
      std::lock_guard<std::mutex> lock(acks.mu);
      acks.attempted_batches.insert(tag);
    } else {
      body = {{"namespace", "crash"},
              {"text", "writer " + std::to_string(writer) + " memory " + std::to_string(i)}};
    }
    Answer a = SendJson(*client, "POST", "/v1/memories", key, body);
    if (a.status == 0) return;  // the server is gone
    if (a.status != 201) continue;
    std::lock_guard<std::mutex> lock(acks.mu);
    if (batches) {
      const json j = a.json();
      for (const auto& e : j["entries"]) acks.batches[tag].push_back(e["id"]);
    } else {
      acks.ids.insert(a.json()["entry"]["id"].get<std::string>());
      acks.singles_this_round.fetch_add(1);
    }
  }
}

TEST(ServiceCrashTest, AcknowledgedWritesSurviveSigkill) {
  testing::TempDir dir;
  const auto store = dir.path() / "store";
  std::string key;
  Acks acks;
  std::mt19937 rng(20261122);
  for (int round = 0; round < 3; ++round) {
    auto server = ServerProcess::Start(store, {"--rate", "0"});
    ASSERT_NE(server, nullptr) << "round " << round;
    if (round == 0) {
      ASSERT_TRUE(server->admin_key().has_value());
      key = *server->admin_key();
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < 3; ++w) {
      writers.emplace_back([&, w] { WriteStream(*server, key, w, /*batches=*/w == 2, stop, acks); });
    }
    const int kill_after = std::uniform_int_distribution<int>(20, 100)(rng);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (acks.singles_this_round.load() < kill_after && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    server->Signal(SIGKILL);  // mid-stream: requests are in flight
    stop = true;
    for (auto& t : writers) t.join();
    acks.singles_this_round = 0;
  }

  auto server = ServerProcess::Start(store, {"--rate", "0"});
  ASSERT_NE(server, nullptr);
  auto client = server->Client(/*keep_alive=*/true);
  ASSERT_GT(acks.ids.size(), 10u) << "the stream wrote too little to test anything";
  RecordProperty("acknowledged_single_writes", static_cast<int>(acks.ids.size()));
  RecordProperty("acknowledged_batches", static_cast<int>(acks.batches.size()));
  for (const std::string& id : acks.ids) {
    Answer got = testing::Send(*client, "GET", "/v1/memories/" + id + "?namespace=crash", key);
    ASSERT_EQ(got.status, 200) << "acknowledged entry " << id << " lost: " << got.body;
    EXPECT_EQ(got.json()["entry"]["state"], "active");
  }
  Answer verify = testing::Send(*client, "POST", "/v1/admin/verify", key);
  ASSERT_EQ(verify.status, 200);
  EXPECT_EQ(verify.json()["ok"], true) << verify.body;
  server->Signal(SIGTERM);
  ASSERT_EQ(server->Wait(std::chrono::seconds(10)), 0);

  // Batches, from one export of the namespace: acknowledged ones are whole; any other batch is
  // whole or absent.
  auto [code, exported] = testing::RunCli(store, {"-n", "crash", "export"});
  ASSERT_EQ(code, 0);
  std::map<std::string, int> per_batch;
  std::istringstream lines(exported);
  for (std::string line; std::getline(lines, line);) {
    const json entry = json::parse(line, nullptr, false);
    ASSERT_TRUE(entry.is_object()) << line;
    if (entry["metadata"].contains("batch")) ++per_batch[entry["metadata"]["batch"].get<std::string>()];
  }
  for (const auto& [tag, n] : per_batch) {
    EXPECT_EQ(n, 5) << "batch " << tag << " is partial";
    EXPECT_TRUE(acks.attempted_batches.count(tag)) << tag;
  }
  for (const auto& [tag, ids] : acks.batches)
    EXPECT_EQ(per_batch[tag], 5) << "acknowledged batch " << tag << " lost";
  EXPECT_GT(acks.batches.size(), 0u);
}

}  // namespace
}  // namespace bulwark
