// The fixture of the replication tests (tests only): a fresh store on the binary's shared
// PostgreSQL test cluster, the store's keyring, and signed writes made through PostgresBackend
// connections (each one a writer replica).
#pragma once

#include <absl/strings/str_cat.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bulwark/env.h"
#include "provenance/keyring.h"
#include "provenance/signer.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/status_matchers.h"
#include "testing/temp_dir.h"

namespace bulwark::testing {

class ReplicationTest : public ::testing::Test {
 protected:
  static constexpr int kDim = 4;

  void SetUp() override {
    auto db = NewPgTestDatabase();
    ASSERT_THAT(db, IsOk());
    conninfo_ = *db;
    auto keyring = Keyring::Create(dir_ / "keyring", Env::Default());
    ASSERT_THAT(keyring, IsOk());
    keyring_ = std::make_unique<Keyring>(*std::move(keyring));
    signer_ = std::make_unique<Signer>(keyring_.get());
    writer_ = OpenBackend();
    ASSERT_NE(writer_, nullptr);
  }
  std::unique_ptr<PostgresBackend> OpenBackend() {
    auto backend = PostgresBackend::Open(conninfo_, /*create=*/true);
    EXPECT_THAT(backend, IsOk());
    return backend.ok() ? *std::move(backend) : nullptr;
  }
  // A signed entry of `ns` with a vector pointing mostly along axis `axis`.
  Entry MakeSigned(const std::string& ns, const std::string& text, int axis = 0) {
    Entry e;
    e.id = absl::StrCat("e", next_id_.fetch_add(1));
    e.name_space = ns;
    e.text = text;
    e.principal = "alice";
    e.created_at_us = e.updated_at_us = Env::Default()->NowMicros();
    e.embedding.assign(kDim, 0.1f);
    e.embedding[axis % kDim] = 0.95f;
    signer_->Sign(&e);
    return e;
  }
  HistoryEvent SignedEvent(const Entry& e, const std::string& what = "add") {
    HistoryEvent ev{0, e.id, e.name_space, what, e.principal, e.updated_at_us, {{"text", e.text}}};
    signer_->Sign(&ev);
    return ev;
  }
  // Inserts a signed entry of `ns` through `backend`; returns the version (seq) of its event.
  absl::StatusOr<int64_t> Add(StorageBackend& backend, const std::string& ns, const std::string& text,
                              int axis = 0) {
    const Entry e = MakeSigned(ns, text, axis);
    const HistoryEvent ev = SignedEvent(e);
    auto ids = backend.InsertEntries({&e, 1}, {&ev, 1});
    if (!ids.ok()) return ids.status();
    const std::vector<int64_t> seqs = backend.TakeInsertedEventSeqs();
    if (seqs.size() != 1) return absl::InternalError("expected one event seq");
    return seqs[0];
  }

  TempDir dir_;
  std::string conninfo_;
  std::unique_ptr<Keyring> keyring_;
  std::unique_ptr<Signer> signer_;
  std::unique_ptr<PostgresBackend> writer_;
  std::atomic<int> next_id_{1};
};

}  // namespace bulwark::testing
