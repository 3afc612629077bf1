// ChangeNotifier and ChangeListener (see the header).
#include "storage/postgresql/change_notify.h"

#include <absl/strings/str_cat.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {
namespace {

using pg::PgParam;

constexpr size_t kMaxNamespaceBytes = 256;

struct NotifyDeleter {
  void operator()(PGnotify* n) const { PQfreemem(n); }
};

}  // namespace

absl::StatusOr<std::unique_ptr<ChangeNotifier>> ChangeNotifier::Open(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  return std::unique_ptr<ChangeNotifier>(new ChangeNotifier(std::move(conn)));
}

absl::Status ChangeNotifier::Notify(std::string_view name_space) {
  if (name_space.empty() || name_space.size() > kMaxNamespaceBytes) {
    return absl::InvalidArgumentError("notify: the namespace must be 1..256 bytes");
  }
  absl::MutexLock lock(&mu_);
  const std::vector<PgParam> params = {PgParam::Text(kChangeChannel), PgParam::Text(name_space)};
  return conn_->Prepared("notify_change", "SELECT pg_notify($1, $2)", params).status();
}

absl::StatusOr<std::unique_ptr<CoalescingNotifier>> CoalescingNotifier::Start(std::string_view conninfo,
                                                                              absl::Duration interval) {
  if (interval <= absl::ZeroDuration() || interval > absl::Seconds(1)) {
    return absl::InvalidArgumentError("notify: the coalescing interval must be in (0, 1 s]");
  }
  BULWARK_ASSIGN_OR_RETURN(auto notifier, ChangeNotifier::Open(conninfo));
  std::unique_ptr<CoalescingNotifier> c(
      new CoalescingNotifier(std::string(conninfo), std::move(notifier), interval));
  c->thread_ = std::thread([p = c.get()] { p->Run(); });
  return c;
}

CoalescingNotifier::~CoalescingNotifier() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void CoalescingNotifier::Hint(std::string_view name_space) {
  if (name_space.empty() || name_space.size() > kMaxNamespaceBytes) return;
  {
    absl::MutexLock lock(&mu_);
    ++stats_.hints;
    if (pending_.size() >= kMaxPendingHints && !pending_.contains(ToAbsl(name_space))) {
      ++stats_.dropped;
      return;
    }
    pending_.insert(std::string(name_space));
  }
  wake_.Signal();
}

CoalescingNotifier::Stats CoalescingNotifier::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void CoalescingNotifier::Send(const absl::flat_hash_set<std::string>& names) {
  int64_t sent = 0;
  if (notifier_ == nullptr) {
    auto reopened = ChangeNotifier::Open(conninfo_);
    if (reopened.ok()) notifier_ = *std::move(reopened);
  }
  for (const std::string& name : names) {
    if (notifier_ == nullptr) break;
    absl::Status s = notifier_->Notify(name);
    if (s.ok()) {
      ++sent;
    } else if (s.code() == absl::StatusCode::kUnavailable) {
      notifier_.reset();
    }
  }
  absl::MutexLock lock(&mu_);
  stats_.sent += sent;
  stats_.dropped += static_cast<int64_t>(names.size()) - sent;
}

void CoalescingNotifier::Run() {
  absl::MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && pending_.empty()) wake_.Wait(&mu_);
    if (pending_.empty()) return;  // stopping, nothing left to send
    absl::flat_hash_set<std::string> names;
    names.swap(pending_);
    const bool stopping = stop_;
    mu_.Unlock();
    Send(names);
    if (!stopping) absl::SleepFor(interval_);  // the coalescing window: hints meanwhile wait
    mu_.Lock();
  }
}

absl::StatusOr<std::unique_ptr<ChangeListener>> ChangeListener::Open(std::string_view conninfo) {
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(conninfo));
  BULWARK_RETURN_IF_ERROR(conn->Exec(absl::StrCat("LISTEN ", kChangeChannel)));
  return std::unique_ptr<ChangeListener>(new ChangeListener(std::move(conn)));
}

bool ChangeListener::Drain(std::vector<std::string>* out) {
  bool any = false;
  while (out->size() < kMaxNotificationsPerWait) {
    std::unique_ptr<PGnotify, NotifyDeleter> n(PQnotifies(conn_->raw()));
    if (n == nullptr) break;
    any = true;
    const std::string name(n->extra != nullptr ? n->extra : "");
    if (std::find(out->begin(), out->end(), name) == out->end()) out->push_back(name);
  }
  return any;
}

absl::StatusOr<std::vector<std::string>> ChangeListener::Wait(absl::Duration timeout) {
  std::vector<std::string> out;
  PGconn* conn = conn_->raw();
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    if (PQconsumeInput(conn) != 1 || PQstatus(conn) != CONNECTION_OK) {
      return absl::UnavailableError(absl::StrCat("listen: the connection is lost: ", PQerrorMessage(conn)));
    }
    if (Drain(&out)) return out;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return out;
    pollfd fd = {PQsocket(conn), POLLIN, 0};
    if (fd.fd < 0) return absl::UnavailableError("listen: the connection has no socket");
    const int ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 60'000));
    if (poll(&fd, 1, ms) < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("listen: poll failed, errno ", errno));
    }
  }
}

}  // namespace bulwark
