// The fixture of the StorageBackend contract tests (tests only): a fresh store of the test's
// parameter (SQLite or PostgreSQL, StoreUnderTest) with one open backend, and the entries and
// events the tests write.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "storage/postgresql/testing/store_under_test.h"
#include "storage/storage_backend.h"
#include "testing/status_matchers.h"

namespace bulwark::testing {

inline Entry MakeEntry(std::string id, std::string ns = "default", std::string text = "hello") {
  Entry e;
  e.id = std::move(id);
  e.name_space = std::move(ns);
  e.text = std::move(text);
  e.metadata = {{"k", "v"}};
  e.principal = "alice";
  e.created_at_us = e.updated_at_us = 123;
  e.embedding = {0.6f, 0.8f};
  e.key_id = 1;
  e.tag = std::string(32, '\x07');
  return e;
}

inline HistoryEvent AddEvent(const Entry& e) {
  return {0, e.id, e.name_space, "add", e.principal, e.created_at_us, {{"text", e.text}}};
}

class StorageBackendContract : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    auto store = StoreUnderTest::Create(GetParam());
    ASSERT_THAT(store, ::bulwark::testing::IsOk());
    store_ = *std::move(store);
    db_ = Open();
    ASSERT_NE(db_, nullptr);
  }
  std::unique_ptr<StorageBackend> Open(bool create = true) {
    auto db = store_->OpenBackend(create);
    EXPECT_THAT(db, ::bulwark::testing::IsOk());
    return db.ok() ? *std::move(db) : nullptr;
  }
  std::vector<StoredRow> Scan(std::string_view ns) {
    std::vector<StoredRow> rows;
    EXPECT_THAT(db_->ScanEntries(ns,
                                 [&](const StoredRow& r) {
                                   rows.push_back(r);
                                   return absl::OkStatus();
                                 }),
                ::bulwark::testing::IsOk());
    return rows;
  }

  std::unique_ptr<StoreUnderTest> store_;
  std::unique_ptr<StorageBackend> db_;
};

}  // namespace bulwark::testing
