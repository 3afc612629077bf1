// EntryStore::List and FindByKey (declared in entry_store.h), and the plain functions of
// entry_listing.h. Kept out of entry_store.cc: they read pages through StorageBackend::ListEntries
// and verify each row with EntryStore::CheckRow, as every other read does.
#include "store/entry_listing.h"

#include <absl/strings/str_cat.h>
#include <absl/synchronization/mutex.h>

#include <algorithm>

#include "core/ids.h"
#include "core/status_macros.h"
#include "core/text_validation.h"
#include "store/entry_keys.h"
#include "store/memory_store_impl.h"

namespace bulwark {
namespace {

// Rows read per List call at most; a filter that matches few rows yields a short page and a cursor.
constexpr int kMaxRowsScanned = 10000;

bool Matches(const nlohmann::json& metadata, const nlohmann::json& filter) {
  for (const auto& [name, value] : filter.items()) {
    auto it = metadata.find(name);
    if (it == metadata.end() || *it != value) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<ListPage> EntryStore::List(std::string_view name_space, const ListRequest& request) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  if (request.limit < 1 || request.limit > 1000) return absl::InvalidArgumentError("limit must be 1..1000");
  if (request.states.empty()) return absl::InvalidArgumentError("no states to list");
  if (!request.cursor.empty() && !IsValidEntryId(request.cursor)) {
    return absl::InvalidArgumentError("the cursor is not an entry id");
  }
  if (!request.filter.is_object()) return absl::InvalidArgumentError("the filter must be a JSON object");
  if (request.key) BULWARK_RETURN_IF_ERROR(ValidateEntryKey(*request.key));
  const int64_t now_us = options_.env->NowMicros();
  ListPage page;
  ListQuery query{std::string(name_space), request.cursor, request.states, request.key, 0};
  int scanned = 0;
  absl::ReaderMutexLock lock(&mu_);
  while (static_cast<int>(page.entries.size()) < request.limit && scanned < kMaxRowsScanned) {
    query.limit =
        std::min(request.limit - static_cast<int>(page.entries.size()) + 1, kMaxRowsScanned - scanned);
    BULWARK_ASSIGN_OR_RETURN(std::vector<StoredRow> rows, backend_->ListEntries(query));
    for (StoredRow& row : rows) {
      ++scanned;
      query.after_id = row.entry.id;
      if (auto s = CheckRow(row, name_space); !s.ok()) {
        ReportBadRow(row.row_id, row.entry.id, name_space, ToStd(s.message()));
        ++page.withheld;
        continue;
      }
      if ((!request.include_expired && IsExpired(row.entry, now_us)) ||
          !Matches(row.entry.metadata, request.filter))
        continue;
      page.entries.push_back(std::move(row.entry));
      if (static_cast<int>(page.entries.size()) == request.limit) break;
    }
    if (static_cast<int>(rows.size()) < query.limit) {
      // The namespace has no rows after these: no cursor (unless the page filled exactly here).
      if (static_cast<int>(page.entries.size()) == request.limit) page.next_cursor = page.entries.back().id;
      return page;
    }
  }
  page.next_cursor =
      static_cast<int>(page.entries.size()) == request.limit ? page.entries.back().id : query.after_id;
  return page;
}

absl::StatusOr<std::optional<Entry>> EntryStore::FindByKey(std::string_view name_space,
                                                           std::string_view key) {
  ListRequest request;
  request.states = {State::kActive, State::kQuarantined};
  request.key = std::string(key);
  request.limit = 1;
  BULWARK_ASSIGN_OR_RETURN(ListPage page, List(name_space, request));
  if (page.entries.empty()) return std::nullopt;
  return std::move(page.entries.front());
}

absl::StatusOr<ListPage> ListEntries(MemoryStore& store, std::string_view name_space,
                                     const ListRequest& request) {
  return store.impl().entries->List(name_space, request);
}

absl::StatusOr<BulkChangeResult> ApplyToNamespace(MemoryStore& store, std::string_view name_space,
                                                  const BulkChange& change, std::string_view actor) {
  if (change.max_entries < 1 || change.max_entries > kMaxRowsScanned) {
    return absl::InvalidArgumentError("max_entries must be 1..10000");
  }
  const bool purge = change.kind == BulkChange::Kind::kPurge;
  ListRequest request;
  request.states = {State::kActive, State::kQuarantined};
  if (purge) request.states.push_back(State::kDeleted);
  request.filter = change.filter;
  request.include_expired = true;
  request.limit = 1000;
  BulkChangeResult result;
  while (true) {
    BULWARK_ASSIGN_OR_RETURN(ListPage page, ListEntries(store, name_space, request));
    for (const Entry& e : page.entries) {
      if (static_cast<int>(result.ids.size()) == change.max_entries) {
        result.more = true;
        return result;
      }
      absl::Status s = purge ? store.Purge(name_space, e.id, actor) : store.Delete(name_space, e.id, actor);
      if (absl::IsFailedPrecondition(s) || absl::IsNotFound(s)) continue;  // changed meanwhile
      if (!s.ok()) {
        return absl::Status(s.code(), absl::StrCat("after ", result.ids.size(), " entries: ", s.message()));
      }
      result.ids.push_back(e.id);
    }
    if (page.next_cursor.empty()) return result;
    request.cursor = page.next_cursor;
  }
}

}  // namespace bulwark
