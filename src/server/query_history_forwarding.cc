// The query history's sender and internal route (see query_history_forwarding.h).
#include "server/query_history_forwarding.h"

#include <absl/strings/str_cat.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/hex.h"
#include "core/strings.h"
#include "server/api_status.h"

namespace bulwark::server {
namespace {

constexpr size_t kMaxNonces = 1 << 16;  // remembered nonces; beyond, batches are refused until some expire

Reply Refusal(int status, std::string_view code, std::string_view message) {
  Reply reply;
  reply.status = status;
  reply.body = ErrorBody(code, message);
  return reply;
}

}  // namespace

QueryHistoryForwarder::QueryHistoryForwarder(QueryForwardingOptions options, const HmacKey& key,
                                             std::function<ReplicaCoordinator*()> coordinator,
                                             AppendQueryFn append_local, Env* env)
    : options_(options),
      key_(key),
      coordinator_(std::move(coordinator)),
      append_local_(std::move(append_local)),
      env_(env) {
  thread_ = std::thread([this] { SendLoop(); });
}

QueryHistoryForwarder::~QueryHistoryForwarder() { Stop(); }

bool QueryHistoryForwarder::Offer(std::string_view name_space, std::span<const float> embedding) {
  ReplicaCoordinator* coordinator = coordinator_();
  if (coordinator == nullptr || coordinator->LeadsNoWait(name_space)) return false;
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  queue_.push_back({std::string(name_space), std::vector<float>(embedding.begin(), embedding.end()), 0});
  while (queue_.size() > options_.max_queued) DropOldestLocked();
  return true;
}

void QueryHistoryForwarder::DropOldestLocked() {
  queue_.pop_front();
  dropped_.fetch_add(1);
}

void QueryHistoryForwarder::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void QueryHistoryForwarder::SendLoop() {
  bool last = false;
  while (!last) {
    std::vector<Queued> items;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || queue_.size() >= options_.flush_at;
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), options_.flush_every);
      last = stopping_;
      items.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
      queue_.clear();
    }
    if (!items.empty()) Flush(std::move(items));
  }
  absl::MutexLock lock(&mu_);
  dropped_.fetch_add(queue_.size());  // what the last flush queued again is not sent any more
  queue_.clear();
}

void QueryHistoryForwarder::Flush(std::vector<Queued> items) {
  ReplicaCoordinator* coordinator = coordinator_();
  if (coordinator == nullptr) return Requeue(std::move(items));
  // Each namespace's route once per flush; the items of each leader in arrival order.
  absl::flat_hash_map<std::string, ReplicaCoordinator::WriteRoute> routes;
  std::map<std::string, std::vector<Queued>> by_url;
  std::vector<Queued> retry;
  for (Queued& item : items) {
    auto [it, fresh] = routes.try_emplace(item.name_space);
    if (fresh) it->second = coordinator->RouteWrite(item.name_space, /*forwarded=*/false);
    switch (it->second.kind) {
      case ReplicaCoordinator::WriteRoute::Kind::kLocal:
        append_local_(item.name_space, item.embedding);
        forwarded_.fetch_add(1);
        break;
      case ReplicaCoordinator::WriteRoute::Kind::kForward:
        by_url[it->second.url].push_back(std::move(item));
        break;
      case ReplicaCoordinator::WriteRoute::Kind::kUnavailable:
        retry.push_back(std::move(item));
        break;
    }
  }
  for (auto& [url, sent] : by_url) {
    std::vector<Queued> failed = SendTo(url, std::move(sent), coordinator);
    std::move(failed.begin(), failed.end(), std::back_inserter(retry));
  }
  if (!retry.empty()) Requeue(std::move(retry));
}

std::vector<QueryHistoryForwarder::Queued> QueryHistoryForwarder::SendTo(const std::string& url,
                                                                         std::vector<Queued> items,
                                                                         ReplicaCoordinator* coordinator) {
  httplib::Client client(url);
  client.set_tcp_nodelay(true);
  const int64_t timeout_us = absl::ToInt64Microseconds(options_.send_timeout);
  client.set_connection_timeout(timeout_us / 1'000'000, timeout_us % 1'000'000);
  client.set_read_timeout(timeout_us / 1'000'000, timeout_us % 1'000'000);
  client.set_write_timeout(timeout_us / 1'000'000, timeout_us % 1'000'000);
  client.set_keep_alive(true);
  std::vector<Queued> undelivered;
  absl::flat_hash_set<std::string> refused;  // namespaces to route again
  for (size_t at = 0; at < items.size(); at += kSendChunk) {
    const std::span<const Queued> chunk(items.data() + at, std::min(kSendChunk, items.size() - at));
    std::vector<std::string> not_leader;
    const bool delivered = SendChunk(client, url, chunk, coordinator->incarnation(), &not_leader);
    for (size_t i = at; i < at + chunk.size(); ++i) {
      const bool appended = delivered && std::find(not_leader.begin(), not_leader.end(),
                                                   items[i].name_space) == not_leader.end();
      if (appended) {
        forwarded_.fetch_add(1);
        continue;
      }
      refused.insert(items[i].name_space);
      undelivered.push_back(std::move(items[i]));
    }
  }
  for (const std::string& ns : refused) coordinator->ForwardFailed(ns);
  return undelivered;
}

bool QueryHistoryForwarder::SendChunk(httplib::Client& client, const std::string& url,
                                      std::span<const Queued> chunk, const std::string& from,
                                      std::vector<std::string>* not_leader) {
  QueryBatch batch;
  batch.from = from;
  batch.sent_us = env_->NowMicros();
  uint8_t nonce[16];
  env_->RandomBytes(nonce);
  batch.nonce = HexEncode(std::span<const uint8_t>(nonce, sizeof nonce));
  for (const Queued& q : chunk) batch.queries.push_back({q.name_space, q.embedding});
  absl::StatusOr<SealedBatch> sealed = SealQueryBatch(batch, key_);
  if (!sealed.ok()) {
    spdlog::warn("sealing a query batch: {}", sealed.status().ToString());
    return false;
  }
  httplib::Headers headers = {{kReplicaMacHeader, sealed->mac}};
  httplib::Result result = client.Post(kQueryHistoryRoute, headers, sealed->body, "application/octet-stream");
  if (!result) {
    spdlog::warn("sending {} queries to {}: {}", chunk.size(), url, httplib::to_string(result.error()));
    return false;
  }
  if (result->status != 200) {
    spdlog::warn("{} refused a query batch: {} {}", url, result->status, result->body);
    return false;
  }
  const nlohmann::json answer = nlohmann::json::parse(result->body, nullptr, false);
  if (answer.is_object() && answer.contains("not_leader") && answer["not_leader"].is_array()) {
    for (const nlohmann::json& ns : answer["not_leader"]) {
      if (ns.is_string()) not_leader->push_back(ns.get<std::string>());
    }
  }
  return true;
}

void QueryHistoryForwarder::Requeue(std::vector<Queued> items) {
  absl::MutexLock lock(&mu_);
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    if (++it->attempts >= options_.max_attempts) {
      dropped_.fetch_add(1);
      continue;
    }
    queue_.push_front(std::move(*it));
  }
  while (queue_.size() > options_.max_queued) DropOldestLocked();
}

std::vector<Sample> QueryHistoryForwarder::Samples() const {
  size_t queued;
  {
    absl::MutexLock lock(&mu_);
    queued = queue_.size();
  }
  return {
      {"bulwark_query_history_forward_queued",
       "Search queries waiting to be sent to their namespace's leader.", "gauge",
       static_cast<double>(queued)},
      {"bulwark_query_history_forwarded_total",
       "Search queries of namespaces led elsewhere that reached the leader's query history.", "counter",
       static_cast<double>(forwarded_.load())},
      {"bulwark_query_history_forward_dropped_total",
       "Search queries dropped before reaching the leader's query history (queue bound, failed sends).",
       "counter", static_cast<double>(dropped_.load())},
  };
}

QueryHistoryReceiver::QueryHistoryReceiver(const HmacKey& key, size_t dimension,
                                           std::function<bool(std::string_view)> leads, AppendQueryFn append,
                                           Env* env)
    : key_(key), dimension_(dimension), leads_(std::move(leads)), append_(std::move(append)), env_(env) {}

bool QueryHistoryReceiver::FreshNonce(const std::string& nonce, int64_t now_us) {
  absl::MutexLock lock(&nonce_mu_);
  while (!nonce_order_.empty() && nonce_order_.front().first < now_us - kMaxBatchSkewUs) {
    nonces_.erase(nonce_order_.front().second);
    nonce_order_.pop_front();
  }
  if (nonces_.contains(nonce) || nonces_.size() >= kMaxNonces) return false;
  nonces_.insert(nonce);
  // Ordered by arrival: a nonce is forgotten kMaxBatchSkewUs after it arrived, by when its batch's
  // sent_us is outside the window anyway.
  nonce_order_.emplace_back(now_us, nonce);
  return true;
}

Reply QueryHistoryReceiver::Handle(const httplib::Request& request) {
  const int64_t now_us = env_->NowMicros();
  absl::StatusOr<QueryBatch> batch =
      OpenQueryBatch(request.body, request.get_header_value(kReplicaMacHeader), key_, now_us, dimension_);
  if (!batch.ok()) {
    refused_.fetch_add(1);
    const bool unauthenticated = batch.status().code() == absl::StatusCode::kUnauthenticated;
    return Refusal(unauthenticated ? 401 : 400, unauthenticated ? "unauthenticated" : "invalid_argument",
                   ToStd(batch.status().message()));
  }
  if (!FreshNonce(batch->nonce, now_us)) {
    refused_.fetch_add(1);
    return Refusal(401, "unauthenticated", "the query batch was received before (a replay)");
  }
  absl::flat_hash_map<std::string, bool> led;
  nlohmann::json not_leader = nlohmann::json::array();
  size_t appended = 0;
  for (const ForwardedQuery& q : batch->queries) {
    auto [it, fresh] = led.try_emplace(q.name_space);
    if (fresh) {
      it->second = leads_(q.name_space);
      if (!it->second) not_leader.push_back(q.name_space);
    }
    if (!it->second) continue;
    append_(q.name_space, q.embedding);
    ++appended;
  }
  received_.fetch_add(appended);
  Reply reply;
  reply.body = {{"appended", appended}, {"not_leader", std::move(not_leader)}};
  return reply;
}

RouteSpec QueryHistoryReceiver::Route() {
  RouteSpec route{"POST", kQueryHistoryRoute, Access::kPublic,
                  [this](const Call& call) -> absl::StatusOr<Reply> { return Handle(call.http); },
                  /*needs_audit=*/false};
  route.json_body = false;  // a binary batch (query_history_batch.h)
  return route;
}

std::vector<Sample> QueryHistoryReceiver::Samples() const {
  return {
      {"bulwark_query_history_received_total",
       "Search queries other replicas served that joined this leader's query history.", "counter",
       static_cast<double>(received_.load())},
      {"bulwark_query_history_refused_total",
       "Query batches refused (MAC, replay, malformed, dimension, non-finite value).", "counter",
       static_cast<double>(refused_.load())},
  };
}

}  // namespace bulwark::server
