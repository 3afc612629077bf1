// Follower (see the header).
#include "replication/follower.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {
namespace {

constexpr size_t kRecentRejections = 16;
constexpr size_t kMaxCachedPlacements = 1 << 16;
// The longest the thread blocks before it looks at the stop flag again.
constexpr absl::Duration kStopCheck = absl::Milliseconds(100);

absl::Status CheckOptions(const FollowerOptions& o) {
  if (o.copies < 1) return absl::InvalidArgumentError("follower: copies must be >= 1");
  if (o.batch < 1 || o.batch > kMaxFeedBatch) {
    return absl::InvalidArgumentError(absl::StrCat("follower: batch must be 1..", kMaxFeedBatch));
  }
  if (o.poll_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("follower: the poll interval must be positive");
  }
  if (std::find(o.replicas.begin(), o.replicas.end(), o.replica_id) == o.replicas.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("follower: replica ", o.replica_id, " is not in the list"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Follower>> Follower::Open(std::string_view conninfo, const Keyring* keyring,
                                                         FollowerOptions options, bool start) {
  BULWARK_RETURN_IF_ERROR(CheckOptions(options));
  BULWARK_ASSIGN_OR_RETURN(auto placement, RendezvousPlacement::Create(options.replicas));
  BULWARK_ASSIGN_OR_RETURN(auto index, ReplicaIndex::Create(options.dimension));
  const bool listen = options.listen;
  std::unique_ptr<Follower> f(new Follower(std::string(conninfo), std::move(options), std::move(placement),
                                           keyring, std::move(index)));
  BULWARK_ASSIGN_OR_RETURN(auto feed, ChangeFeed::Open(conninfo));
  {
    absl::MutexLock apply(&f->apply_mu_);  // no thread yet; the analysis wants the lock
    f->feed_ = std::move(feed);
  }
  // Listen before the first read: a hint sent after that read is then never missed.
  if (listen) {
    BULWARK_ASSIGN_OR_RETURN(f->listener_, ChangeListener::Open(conninfo));
  }
  if (start) f->thread_ = std::thread([p = f.get()] { p->Run(); });
  return f;
}

Follower::~Follower() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

bool Follower::Holds(std::string_view name_space) const {
  absl::MutexLock lock(&mu_);
  auto it = holds_.find(ToAbsl(name_space));
  if (it != holds_.end()) return it->second;
  const std::vector<std::string> owners = placement_.Place(name_space, options_.copies);
  const bool held = std::find(owners.begin(), owners.end(), options_.replica_id) != owners.end();
  if (holds_.size() < kMaxCachedPlacements) holds_.emplace(std::string(name_space), held);
  return held;
}

absl::StatusOr<int64_t> Follower::AppliedVersion(std::string_view name_space) const {
  if (!Holds(name_space)) {
    return absl::FailedPreconditionError(
        absl::StrCat("namespace ", ToAbsl(name_space), " is not placed on replica ", options_.replica_id));
  }
  absl::MutexLock lock(&mu_);
  return applied_;
}

absl::Status Follower::WaitForVersion(std::string_view name_space, int64_t version, absl::Time deadline) {
  BULWARK_RETURN_IF_ERROR(AppliedVersion(name_space).status());
  absl::MutexLock lock(&mu_);
  auto reached = [this, version]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return applied_ >= version; };
  if (!mu_.AwaitWithDeadline(absl::Condition(&reached), deadline)) {
    return absl::UnavailableError(absl::StrCat("replica ", options_.replica_id, " has applied namespace ",
                                               ToAbsl(name_space), " up to version ", applied_,
                                               ", the read needs ", version, "; retry"));
  }
  return absl::OkStatus();
}

absl::Status Follower::CheckRow(const FeedEvent& event, const StoredRow& row) const {
  if (!row.ok()) return absl::DataLossError(absl::StrCat("does not decode: ", row.decode_error));
  const Entry& e = row.entry;
  if (e.name_space != event.name_space || e.id != event.entry_id) {
    return absl::DataLossError("the row is not the event's entry");
  }
  if (e.state != State::kDeleted && e.state != State::kPurged &&
      static_cast<int>(e.embedding.size()) != options_.dimension) {
    return absl::DataLossError(absl::StrCat("a vector of ", e.embedding.size(), " floats"));
  }
  return signer_.Verify(e);
}

void Follower::Reject(const FeedEvent& event, const absl::Status& why) {
  index_->Remove(event.name_space, event.entry_id);
  absl::MutexLock lock(&mu_);
  ++stats_.rows_rejected;
  auto& recent = stats_.recent_rejections;
  if (recent.size() == kRecentRejections) recent.erase(recent.begin());
  recent.push_back(
      absl::StrCat(event.name_space, "/", event.entry_id, " (version ", event.seq, "): ", why.message()));
}

void Follower::ApplyLocked(const FeedEvent& event) {
  if (!event.row.has_value()) {
    index_->Remove(event.name_space, event.entry_id);  // no row: nothing to serve
  } else if (absl::Status ok = CheckRow(event, *event.row); !ok.ok()) {
    Reject(event, ok);
  } else if (absl::Status put = index_->Put(*event.row); !put.ok()) {
    Reject(event, put);
  }
  if (options_.on_apply) options_.on_apply(event.seq, event.name_space);
  absl::MutexLock lock(&mu_);
  ++stats_.events_applied;
}

absl::Status Follower::ReopenFeedIfLost() {
  if (!feed_lost_) return absl::OkStatus();
  BULWARK_ASSIGN_OR_RETURN(feed_, ChangeFeed::Open(conninfo_));
  feed_lost_ = false;
  return absl::OkStatus();
}

absl::StatusOr<int> Follower::PollOnce() {
  absl::MutexLock apply(&apply_mu_);
  if (absl::Status reopened = ReopenFeedIfLost(); !reopened.ok()) {
    absl::MutexLock lock(&mu_);
    stats_.last_error = reopened.ToString();
    return reopened;
  }
  int64_t after = 0;
  {
    absl::MutexLock lock(&mu_);
    after = applied_;
    ++stats_.polls;
  }
  auto read = feed_->ReadAfter(after, options_.batch, [this](std::string_view ns) { return Holds(ns); });
  if (!read.ok()) {
    if (read.status().code() == absl::StatusCode::kUnavailable) feed_lost_ = true;
    absl::MutexLock lock(&mu_);
    stats_.last_error = read.status().ToString();
    return read.status();
  }
  for (const FeedEvent& e : read->events) {
    if (Holds(e.name_space)) ApplyLocked(e);
  }
  {
    absl::MutexLock lock(&mu_);
    applied_ = std::max(applied_, read->through);
    stats_.applied_version = applied_;  // wakes WaitForVersion's Await
  }
  return static_cast<int>(read->events.size());
}

absl::Status Follower::CatchUp() {
  while (!stopping_) {
    BULWARK_ASSIGN_OR_RETURN(int read, PollOnce());
    if (read < options_.batch) break;
  }
  return absl::OkStatus();
}

void Follower::Sleep() {
  const absl::Time until = absl::Now() + options_.poll_interval;
  if (listener_ == nullptr && options_.listen) {
    auto reopened = ChangeListener::Open(conninfo_);  // the next poll covers hints missed meanwhile
    if (reopened.ok()) listener_ = *std::move(reopened);
  }
  while (!stopping_) {
    const absl::Duration left = until - absl::Now();
    if (left <= absl::ZeroDuration()) return;
    const absl::Duration slice = std::min(left, kStopCheck);
    if (listener_ == nullptr) {
      absl::SleepFor(slice);
      continue;
    }
    auto hints = listener_->Wait(slice);
    if (!hints.ok()) {
      listener_.reset();  // polling alone still bounds the delay
      absl::MutexLock lock(&mu_);
      stats_.last_error = hints.status().ToString();
      continue;
    }
    if (!hints->empty()) {
      absl::MutexLock lock(&mu_);
      ++stats_.wakeups;
      return;
    }
  }
}

void Follower::Run() {
  while (!stopping_) {
    if (absl::Status s = CatchUp(); !s.ok()) {
      absl::MutexLock lock(&mu_);
      stats_.last_error = s.ToString();
    }
    Sleep();
  }
}

FollowerStats Follower::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace bulwark
