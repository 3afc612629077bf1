#include "embed/synonym_table.h"

#include <absl/synchronization/mutex.h>

#include <algorithm>

#include "core/status_macros.h"

namespace bulwark {

absl::StatusOr<std::shared_ptr<const SynonymTable>> SynonymTable::Shared(const std::string& dir) {
  ABSL_CONST_INIT static absl::Mutex mu(absl::kConstInit);
  static absl::flat_hash_map<std::string, std::shared_ptr<const SynonymTable>> cache;
  absl::MutexLock lock(&mu);
  if (auto it = cache.find(dir); it != cache.end()) return it->second;
  BULWARK_ASSIGN_OR_RETURN(auto canonicalizer, WordNetCanonicalizer::Shared(dir));
  std::shared_ptr<SynonymTable> table(new SynonymTable());
  table->canonicalizer_ = canonicalizer;
  table->canonicalizer_->ForEachLemma([&](std::string_view lemma) {
    if (WordNetCanonicalizer::IsStopword(lemma)) return;
    const std::string_view canonical = table->canonicalizer_->Canonicalize(lemma);
    if (canonical == lemma && lemma.size() < 2) return;
    table->groups_[canonical].emplace_back(lemma);
  });
  for (auto it = table->groups_.begin(); it != table->groups_.end();) {
    if (it->second.size() < 2) {
      table->groups_.erase(it++);
    } else {
      std::sort(it->second.begin(), it->second.end());
      ++it;
    }
  }
  cache[dir] = table;
  return std::shared_ptr<const SynonymTable>(table);
}

std::span<const std::string> SynonymTable::GroupOf(std::string_view word) const {
  auto it = groups_.find(canonicalizer_->Canonicalize(word));
  if (it == groups_.end()) return {};
  const auto& group = it->second;
  if (!std::binary_search(group.begin(), group.end(), word)) return {};
  return group;
}

}  // namespace bulwark
