// ReplicaIndex (see the header).
#include "replication/replica_index.h"

#include <absl/strings/str_cat.h>

#include <utility>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark {

absl::StatusOr<std::unique_ptr<ReplicaIndex>> ReplicaIndex::Create(int dimension) {
  if (dimension < 1 || dimension > FlatIndex::kMaxDimension) {
    return absl::InvalidArgumentError(absl::StrCat("replica index: bad dimension ", dimension));
  }
  return std::unique_ptr<ReplicaIndex>(new ReplicaIndex(dimension));
}

void ReplicaIndex::RemoveLocked(Namespace& ns, std::string_view id) {
  auto it = ns.by_id.find(ToAbsl(id));
  if (it == ns.by_id.end()) return;
  ns.vectors->Remove(it->second.row_id).IgnoreError();  // present: added with the entry
  ns.id_by_row.erase(it->second.row_id);
  ns.by_id.erase(it);
}

absl::Status ReplicaIndex::Put(const StoredRow& row) {
  const Entry& e = row.entry;
  if (static_cast<int>(e.embedding.size()) != dimension_) {
    return absl::InvalidArgumentError(absl::StrCat("replica index: entry ", e.id, " has a vector of ",
                                                   e.embedding.size(), " floats, not ", dimension_));
  }
  absl::MutexLock lock(&mu_);
  auto [slot, created] = namespaces_.try_emplace(e.name_space);
  Namespace& ns = slot->second;
  if (created) {
    BULWARK_ASSIGN_OR_RETURN(ns.vectors, FlatIndex::Create(dimension_));
  }
  if (auto it = ns.by_id.find(e.id); it != ns.by_id.end()) {
    if (it->second.entry.updated_at_us > e.updated_at_us) {
      return absl::DataLossError(absl::StrCat("replica index: entry ", e.id, " of namespace ", e.name_space,
                                              " is older than the version held (rolled back)"));
    }
    RemoveLocked(ns, e.id);
  }
  if (e.state == State::kDeleted || e.state == State::kPurged) return absl::OkStatus();
  BULWARK_RETURN_IF_ERROR(ns.vectors->Add(row.row_id, e.embedding, e.state, e.kind));
  Held held{row.row_id, e};
  held.entry.embedding.clear();
  held.entry.embedding.shrink_to_fit();
  held.entry.report = nlohmann::json::object();  // advisory; reads never return it
  ns.id_by_row[row.row_id] = e.id;
  ns.by_id.emplace(e.id, std::move(held));
  return absl::OkStatus();
}

void ReplicaIndex::Remove(std::string_view name_space, std::string_view id) {
  absl::MutexLock lock(&mu_);
  auto it = namespaces_.find(ToAbsl(name_space));
  if (it != namespaces_.end()) RemoveLocked(it->second, id);
}

std::optional<Entry> ReplicaIndex::Get(std::string_view name_space, std::string_view id) const {
  absl::ReaderMutexLock lock(&mu_);
  auto ns = namespaces_.find(ToAbsl(name_space));
  if (ns == namespaces_.end()) return std::nullopt;
  auto it = ns->second.by_id.find(ToAbsl(id));
  if (it == ns->second.by_id.end()) return std::nullopt;
  return it->second.entry;
}

absl::StatusOr<std::vector<ReplicaHit>> ReplicaIndex::Search(std::string_view name_space,
                                                             std::span<const float> query, int k) const {
  if (static_cast<int>(query.size()) != dimension_ || k < 0) {
    return absl::InvalidArgumentError("replica index: bad query dimension or k");
  }
  absl::ReaderMutexLock lock(&mu_);
  std::vector<ReplicaHit> hits;
  auto ns = namespaces_.find(ToAbsl(name_space));
  if (ns == namespaces_.end()) return hits;
  BULWARK_ASSIGN_OR_RETURN(auto found, ns->second.vectors->Search(query, k, IndexFilter{}));
  for (const IndexHit& h : found) {
    const std::string& id = ns->second.id_by_row.at(h.row_id);
    hits.push_back({ns->second.by_id.at(id).entry, h.score});
  }
  return hits;
}

size_t ReplicaIndex::size(std::string_view name_space) const {
  absl::ReaderMutexLock lock(&mu_);
  auto ns = namespaces_.find(ToAbsl(name_space));
  return ns == namespaces_.end() ? 0 : ns->second.by_id.size();
}

ReplicaMemory ReplicaIndex::Memory() const {
  absl::ReaderMutexLock lock(&mu_);
  ReplicaMemory m;
  m.namespaces = namespaces_.size();
  for (const auto& [name, ns] : namespaces_) {
    m.rows += ns.by_id.size();
    m.vector_bytes += ns.vectors->size() * static_cast<size_t>(dimension_) * sizeof(float);
    for (const auto& [id, held] : ns.by_id) {
      const Entry& e = held.entry;
      m.text_bytes +=
          id.size() + e.text.size() + e.metadata.dump().size() + e.principal.size() + e.tag.size();
    }
  }
  return m;
}

}  // namespace bulwark
