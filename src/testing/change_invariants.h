// Test helper: the invariants that must hold for an entry after any interleaving of changes by
// several writers (issue #18, point 3): history in order, the row is the version its last event
// wrote, nothing follows a purge and a purged entry has no text, a deleted entry stays deleted, the
// state agrees with the last event.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "store/memory_store.h"
#include "testing/status_matchers.h"

namespace bulwark::testing {

inline void ExpectChangeInvariants(MemoryStore& store, const std::string& name_space, const std::string& id) {
  auto row = store.Get(name_space, id);
  ASSERT_THAT(row, IsOk()) << id;
  auto history = store.History(name_space, id);
  ASSERT_THAT(history, IsOk()) << id;
  ASSERT_FALSE(history->empty()) << id;
  for (size_t i = 1; i < history->size(); ++i) {
    EXPECT_GT((*history)[i].seq, (*history)[i - 1].seq) << id;
    EXPECT_GE((*history)[i].at_us, (*history)[i - 1].at_us) << id;
  }
  const HistoryEvent& last = history->back();
  EXPECT_EQ(row->updated_at_us, last.at_us) << id << ": the row is the version its last event wrote";
  auto any = [&](std::initializer_list<const char*> events) {
    return std::any_of(history->begin(), history->end(), [&](const HistoryEvent& e) {
      return std::find(events.begin(), events.end(), e.event) != events.end();
    });
  };
  if (any({"purge"})) {
    EXPECT_EQ(row->state, State::kPurged) << id << ": a purged entry never comes back";
    EXPECT_EQ(row->text, "") << id;
    EXPECT_EQ(last.event, "purge") << id << ": nothing follows a purge";
  } else if (any({"delete", "reject"})) {
    EXPECT_EQ(row->state, State::kDeleted) << id << ": a deleted entry never comes back";
  }
  if (last.event == "update" || last.event == "release" || last.event == "add") {
    EXPECT_TRUE(row->state == State::kActive || row->state == State::kQuarantined) << id;
  }
  if (last.event == "quarantine") {
    EXPECT_EQ(row->state, State::kQuarantined) << id;
  }
}

}  // namespace bulwark::testing
