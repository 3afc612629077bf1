// VersionChecker (see the header).
#include "replication/version_checker.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {

void VersionChecker::Problem(std::string text) {
  if (report_.problems.size() < kMaxProblems) report_.problems.push_back(std::move(text));
}

void VersionChecker::Observe(int64_t version, std::string_view name_space) {
  ++report_.events;
  if (report_.events > 1 && version == previous_) {
    ++report_.duplicates;
    Problem(absl::StrCat("version ", version, " observed twice"));
    return;
  }
  if (report_.events > 1 && version < previous_) {
    ++report_.reorderings;
    Problem(absl::StrCat("version ", version, " came after ", previous_));
  } else if (mode_ == Mode::kWholeStore && version != expected_) {
    report_.gaps += version - expected_;
    Problem(absl::StrCat("versions ", expected_, "..", version - 1, " are missing"));
  }
  auto [it, inserted] = last_by_namespace_.try_emplace(std::string(name_space), version);
  if (!inserted) {
    if (version <= it->second) {
      ++report_.reorderings;
      Problem(
          absl::StrCat("namespace ", ToAbsl(name_space), ": version ", version, " came after ", it->second));
    }
    it->second = std::max(it->second, version);
  }
  previous_ = version;
  expected_ = std::max(expected_, version + 1);
  report_.last_version = std::max(report_.last_version, version);
}

absl::StatusOr<VersionReport> CheckStoreVersions(ChangeFeed& feed, int batch) {
  VersionChecker checker(VersionChecker::Mode::kWholeStore);
  int64_t after = 0;
  while (true) {
    BULWARK_ASSIGN_OR_RETURN(FeedBatch read, feed.ReadAfter(after, batch, nullptr));
    for (const FeedEvent& e : read.events) checker.Observe(e.seq, e.name_space);
    if (read.events.empty() || read.through <= after) break;
    after = read.through;
  }
  return checker.report();
}

absl::StatusOr<VersionReport> CompareWithStore(ChangeFeed& feed, std::string_view name_space,
                                               const std::vector<int64_t>& applied, int64_t through) {
  std::vector<int64_t> stored;
  int64_t after = 0;
  while (after < through) {
    BULWARK_ASSIGN_OR_RETURN(FeedBatch read, feed.ReadNamespaceAfter(name_space, after, 1000, false));
    for (const FeedEvent& e : read.events) {
      if (e.seq <= through) stored.push_back(e.seq);
    }
    if (read.events.empty() || read.through <= after) break;
    after = read.through;
  }
  VersionChecker checker(VersionChecker::Mode::kSubsequence);
  for (int64_t v : applied) checker.Observe(v, name_space);
  VersionReport report = checker.report();
  size_t i = 0;
  for (; i < std::min(stored.size(), applied.size()); ++i) {
    if (stored[i] != applied[i]) break;
  }
  if (i < stored.size() || applied.size() != stored.size()) {
    ++report.gaps;
    const std::string what = i < stored.size() ? absl::StrCat("version ", stored[i], " was skipped")
                                               : absl::StrCat("version ", applied[i], " is not in the store");
    report.problems.push_back(absl::StrCat("namespace ", ToAbsl(name_space), ": ", what, " (applied ",
                                           applied.size(), " of ", stored.size(), ")"));
  }
  return report;
}

}  // namespace bulwark
