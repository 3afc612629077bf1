// EntryStore: checking the store-wide history chain (history_chain.h) at open and in Verify
// (issue #18 point 6 (i)).
#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>
#include <spdlog/spdlog.h>

#include "core/status_macros.h"
#include "provenance/signer.h"
#include "store/entry_store.h"
#include "store/history_chain.h"

namespace bulwark {
namespace {

// Why `head` does not vouch for the newest event (seq, link), or empty if it does.
std::string HeadProblem(const HistoryChain& chain, const std::optional<HistoryHead>& head, int64_t newest_seq,
                        const std::string& newest_link) {
  if (!head.has_value()) {
    return newest_seq == 0 ? "" : "the store has history events but no signed history head (deleted?)";
  }
  if (absl::Status s = chain.CheckHead(*head); !s.ok()) return std::string(s.message());
  if (head->seq != newest_seq || head->link != newest_link) {
    return absl::StrCat("the signed history head names event ", head->seq, " but the newest event is ",
                        newest_seq, ": events were deleted from the end, or renumbered");
  }
  return "";
}

}  // namespace

void EntryStore::SetChainProblem(std::string problem) {
  absl::MutexLock lock(&freeze_mu_);
  if (!problem.empty() && !chain_broken_.load()) spdlog::error("history chain broken: {}", problem);
  chain_broken_.store(!problem.empty());
  chain_problem_ = std::move(problem);
}

absl::Status EntryStore::CheckChainHead() {
  absl::StatusOr<std::optional<HistoryHead>> head = backend_->HistoryChainHead();
  if (!head.ok() && head.status().code() != absl::StatusCode::kDataLoss) return head.status();
  BULWARK_ASSIGN_OR_RETURN(const auto newest, backend_->NewestLink());
  SetChainProblem(head.ok() ? HeadProblem(*chain_, *head, newest.first, newest.second.link)
                            : std::string(head.status().message()));
  return absl::OkStatus();
}

absl::Status EntryStore::VerifyHistory(VerifyReport* report) {
  std::string previous;  // the link of the last event in the chain so far
  int64_t last_seq = 0;
  std::string first_problem;
  auto bad = [&](const HistoryEvent& e, std::string reason) {
    if (first_problem.empty()) first_problem = absl::StrCat("event ", e.seq, ": ", reason);
    report->bad_events.push_back({e.seq, e.entry_id, e.name_space, std::move(reason)});
  };
  BULWARK_RETURN_IF_ERROR(backend_->ScanHistoryChain([&](const HistoryEvent& e, const HistoryLink& link) {
    ++report->events_checked;
    if (absl::Status s = signer_->Verify(e); !s.ok()) {
      report->bad_events.push_back({e.seq, e.entry_id, e.name_space, std::string(s.message())});
    }
    last_seq = e.seq;
    if (link.link.empty()) {
      bad(e, "not linked into the history chain (inserted by hand?)");
      return absl::OkStatus();
    }
    if (!chain_->CheckLink(e, link, previous).ok()) {
      bad(e,
          "the history chain breaks here: an event before it was deleted, or this event was renumbered, "
          "reordered or inserted");
    }
    previous = link.link;
    return absl::OkStatus();
  }));
  absl::StatusOr<std::optional<HistoryHead>> head = backend_->HistoryChainHead();
  if (!head.ok() && head.status().code() != absl::StatusCode::kDataLoss) return head.status();
  BULWARK_ASSIGN_OR_RETURN(const auto newest, backend_->NewestLink());
  std::string head_problem = head.ok() ? HeadProblem(*chain_, *head, newest.first, newest.second.link)
                                       : std::string(head.status().message());
  if (!head_problem.empty()) {
    if (first_problem.empty()) first_problem = head_problem;
    report->bad_events.push_back(
        {head.ok() && head->has_value() ? (*head)->seq : last_seq, "", "", std::move(head_problem)});
  }
  SetChainProblem(std::move(first_problem));
  return absl::OkStatus();
}

}  // namespace bulwark
