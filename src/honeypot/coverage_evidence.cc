// Coverage evidence for the honeypot monitor (see coverage_evidence.h).
#include "honeypot/coverage_evidence.h"

#include <absl/container/flat_hash_set.h>
#include <absl/status/status.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/strings.h"

namespace bulwark::honeypot {
namespace {

bool InWindow(const std::vector<int64_t>& ids, int64_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Records `id` in a ring of at most `capacity` ids.
void Push(std::vector<int64_t>* ids, size_t* next, size_t capacity, int64_t id) {
  if (ids->size() < capacity) {
    ids->push_back(id);
    return;
  }
  (*ids)[*next] = id;
  *next = (*next + 1) % capacity;
}

// Novel ids of `round` against `ids`, then records them (a round's duplicate counts once).
int NovelAndRecord(std::vector<int64_t>* ids, size_t* next, size_t capacity, std::span<const int64_t> round) {
  int novel = 0;
  for (size_t i = 0; i < round.size(); ++i) {
    const int64_t id = round[i];
    if (std::find(round.begin(), round.begin() + static_cast<std::ptrdiff_t>(i), id) !=
        round.begin() + static_cast<std::ptrdiff_t>(i))
      continue;
    if (InWindow(*ids, id)) continue;
    ++novel;
    Push(ids, next, capacity, id);
  }
  return novel;
}

}  // namespace

std::vector<double> MonotoneNoveltyLlr(std::span<const int> benign_novel, std::span<const int> attack_novel,
                                       int k_obs, double unseen_weight) {
  absl::StatusOr<CountCalibration> table =
      CountCalibration::Fit(benign_novel, attack_novel, k_obs, /*cap=*/0, unseen_weight, /*monotone=*/true);
  return table.ok() ? std::move(table->llr) : std::vector<double>{};
}

absl::StatusOr<std::unique_ptr<CoverageWindows>> CoverageWindows::Create(
    const CoverageWindowOptions& options) {
  if (options.window < 1 || options.window > 4096)
    return absl::InvalidArgumentError("coverage window must be in 1 .. 4096 ids");
  if (options.max_keys < 1 || options.max_keys > (size_t{1} << 20))
    return absl::InvalidArgumentError("coverage max_keys must be in 1 .. 2^20");
  return std::unique_ptr<CoverageWindows>(new CoverageWindows(options));
}

int CoverageWindows::Novel(std::string_view key, std::span<const int64_t> ids) {
  absl::MutexLock lock(&mu_);
  auto it = windows_.find(ToAbsl(key));
  if (it == windows_.end()) {
    if (windows_.size() >= options_.max_keys) EvictOldest();
    it = windows_.emplace(std::string(key), Window()).first;
  }
  Window& w = it->second;
  w.last_used = ++clock_;
  return NovelAndRecord(&w.ids, &w.next, options_.window, ids);
}

void CoverageWindows::EvictOldest() {
  // Drops the least recently used eighth (at least one key), so a full table scans once per
  // max_keys / 8 new keys, not once per key.
  std::vector<uint64_t> used;
  used.reserve(windows_.size());
  for (const auto& [key, w] : windows_) used.push_back(w.last_used);
  const size_t drop = std::max<size_t>(1, used.size() / 8);
  std::nth_element(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(drop - 1), used.end());
  const uint64_t cutoff = used[drop - 1];
  absl::erase_if(windows_, [cutoff](const auto& kv) { return kv.second.last_used <= cutoff; });
}

size_t CoverageWindows::size() const {
  absl::MutexLock lock(&mu_);
  return windows_.size();
}

absl::StatusOr<CoverageCalibration> CoverageCalibration::Fit(std::span<const int> benign_novel,
                                                             std::span<const int> attack_novel, int k_obs,
                                                             double cap, double unseen_weight, double floor,
                                                             bool monotone) {
  if (!(cap > 0 && cap <= 20))
    return absl::InvalidArgumentError("coverage calibration: cap must be in (0, 20]");
  if (!(floor <= 0 && floor >= -20))
    return absl::InvalidArgumentError("coverage calibration: floor must be in [-20, 0]");
  CoverageCalibration out;
  absl::StatusOr<CountCalibration> table =
      CountCalibration::Fit(benign_novel, attack_novel, k_obs, /*cap=*/0, unseen_weight, monotone);
  if (!table.ok()) return table.status();
  out.table = *std::move(table);
  for (double& l : out.table.llr) l = std::clamp(l, floor, cap);
  out.monotone = monotone;
  out.benign_rounds = benign_novel.size();
  out.attack_rounds = attack_novel.size();
  out.benign_histogram.assign(static_cast<size_t>(k_obs) + 1, 0);
  out.attack_histogram.assign(static_cast<size_t>(k_obs) + 1, 0);
  for (int n : benign_novel) ++out.benign_histogram[static_cast<size_t>(n)];  // n checked by the table's Fit
  for (int n : attack_novel) ++out.attack_histogram[static_cast<size_t>(n)];
  return out;
}

double CoverageCalibration::Llr(int novel) const {
  if (novel < 0 || table.llr.empty()) return 0;
  return table.llr[std::min(static_cast<size_t>(novel), table.llr.size() - 1)];
}

nlohmann::json CoverageCalibration::ToJson() const {
  return {{"llr", table.llr},
          {"monotone", monotone},
          {"benign_rounds", benign_rounds},
          {"attack_rounds", attack_rounds},
          {"benign_histogram", benign_histogram},
          {"attack_histogram", attack_histogram}};
}

std::vector<int> SessionNovelty(std::span<const std::vector<int64_t>> round_ids, size_t window) {
  std::vector<int> out;
  out.reserve(round_ids.size());
  std::vector<int64_t> ids;
  size_t next = 0;
  for (const std::vector<int64_t>& round : round_ids)
    out.push_back(NovelAndRecord(&ids, &next, std::max<size_t>(window, 1), round));
  return out;
}

double CoverageEvidence::Observe(std::string_view key, std::span<const RetrievedRow> top) {
  int64_t ids[64];
  size_t n = 0;
  for (const RetrievedRow& r : top) {
    if (!r.is_pot && r.id >= 0 && n < 64) ids[n++] = r.id;
  }
  return calibration_.Llr(windows_->Novel(key, std::span<const int64_t>(ids, n)));
}

double CoverageEvidence::Observe(const SessionKey& key, std::span<const RetrievedRow> top) {
  std::string principal;
  AppendKeyBytes(key, KeyLevel::kPrincipal, &principal);
  return Observe(principal, top);
}

}  // namespace bulwark::honeypot
