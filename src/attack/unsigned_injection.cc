// Unsigned rows planted directly into the store's SQLite file.
#include "attack/unsigned_injection.h"

#include <sqlite3.h>

#include <cstring>
#include <memory>
#include <random>

#include "attack/attack.h"
#include "storage/store_layout.h"

namespace bulwark::attack {
namespace {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* st) const { sqlite3_finalize(st); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

absl::Status SqlError(sqlite3* db, std::string_view what) {
  return absl::InternalError(std::string(what) + ": " + sqlite3_errmsg(db));
}

absl::StatusOr<Stmt> Prepare(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) return SqlError(db, "prepare");
  return Stmt(st);
}

std::string RandomId(std::mt19937_64& rng) {
  static constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string id = "01";
  for (int i = 0; i < 24; ++i) id += kCrockford[rng() % 32];
  return id;
}

}  // namespace

std::string_view ToString(UnsignedVariant variant) {
  switch (variant) {
    case UnsignedVariant::kMissingTag:
      return "missing_tag";
    case UnsignedVariant::kBogusTag:
      return "bogus_tag";
    case UnsignedVariant::kCopiedTag:
      return "copied_tag";
    case UnsignedVariant::kTamperedText:
      return "tampered_text";
  }
  return "unknown";
}

absl::StatusOr<std::vector<UnsignedRow>> InjectUnsignedRows(
    const std::filesystem::path& store_dir, std::string_view name_space, std::string_view poison_text,
    const Embedder& embedder, const std::vector<UnsignedVariant>& variants, uint64_t seed) {
  auto embedding = embedder.Embed(poison_text);
  if (!embedding.ok()) return embedding.status();
  const std::string blob(reinterpret_cast<const char*>(embedding->data()), embedding->size() * sizeof(float));
  sqlite3* raw = nullptr;
  const std::string path = StoreLayout(store_dir).database().string();
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    Db closer(raw);
    return absl::InternalError("cannot open " + path);
  }
  Db db(raw);
  sqlite3_busy_timeout(db.get(), 5000);
  std::mt19937_64 rng = AttackRng(seed, "unsigned");

  // The newest legitimate rows of the namespace: donors for copied_tag and tampered_text.
  struct Donor {
    int64_t row_id;
    std::string id, tag;
    int64_t key_id, created_at;
  };
  std::vector<Donor> donors;
  {
    auto st = Prepare(db.get(),
                      "SELECT row_id, id, tag, key_id, created_at_us FROM entries WHERE namespace = ?1 "
                      "AND state = 'active' ORDER BY row_id DESC LIMIT 8");
    if (!st.ok()) return st.status();
    sqlite3_bind_text(st->get(), 1, name_space.data(), static_cast<int>(name_space.size()), SQLITE_TRANSIENT);
    while (sqlite3_step(st->get()) == SQLITE_ROW) {
      Donor d;
      d.row_id = sqlite3_column_int64(st->get(), 0);
      d.id = reinterpret_cast<const char*>(sqlite3_column_text(st->get(), 1));
      d.tag.assign(static_cast<const char*>(sqlite3_column_blob(st->get(), 2)),
                   sqlite3_column_bytes(st->get(), 2));
      d.key_id = sqlite3_column_int64(st->get(), 3);
      d.created_at = sqlite3_column_int64(st->get(), 4);
      donors.push_back(std::move(d));
    }
  }
  std::vector<UnsignedRow> out;
  size_t next_donor = 0;
  for (UnsignedVariant variant : variants) {
    UnsignedRow row{.variant = variant};
    if (variant == UnsignedVariant::kTamperedText) {
      if (next_donor >= donors.size())
        return absl::FailedPreconditionError("unsigned: no legitimate row to tamper with");
      const Donor& d = donors[next_donor++];
      auto st = Prepare(db.get(), "UPDATE entries SET text = ?1, embedding = ?2 WHERE row_id = ?3");
      if (!st.ok()) return st.status();
      sqlite3_bind_text(st->get(), 1, poison_text.data(), static_cast<int>(poison_text.size()),
                        SQLITE_TRANSIENT);
      sqlite3_bind_blob(st->get(), 2, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
      sqlite3_bind_int64(st->get(), 3, d.row_id);
      if (sqlite3_step(st->get()) != SQLITE_DONE) return SqlError(db.get(), "tamper");
      row.id = d.id;
      row.row_id = d.row_id;
      out.push_back(std::move(row));
      continue;
    }
    std::string tag;
    int64_t key_id = 1, created_at = 1'700'000'000'000'000;
    if (variant == UnsignedVariant::kBogusTag) {
      tag.resize(32);
      for (char& c : tag) c = static_cast<char>(rng());
    } else if (variant == UnsignedVariant::kCopiedTag) {
      if (next_donor >= donors.size())
        return absl::FailedPreconditionError("unsigned: no legitimate row to copy");
      const Donor& d = donors[next_donor++];
      tag = d.tag;
      key_id = d.key_id;
      created_at = d.created_at;
    }
    row.id = RandomId(rng);
    auto st = Prepare(db.get(),
                      "INSERT INTO entries(id, namespace, text, metadata, principal, source, kind, state, "
                      "created_at_us, updated_at_us, embedding, key_id, tag, report) VALUES "
                      "(?1, ?2, ?3, '{}', 'mallory', 'user', 'memory', 'active', ?4, ?4, ?5, ?6, ?7, '{}')");
    if (!st.ok()) return st.status();
    sqlite3_bind_text(st->get(), 1, row.id.data(), static_cast<int>(row.id.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(st->get(), 2, name_space.data(), static_cast<int>(name_space.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(st->get(), 3, poison_text.data(), static_cast<int>(poison_text.size()),
                      SQLITE_TRANSIENT);
    sqlite3_bind_int64(st->get(), 4, created_at);
    sqlite3_bind_blob(st->get(), 5, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(st->get(), 6, key_id);
    sqlite3_bind_blob(st->get(), 7, tag.data(), static_cast<int>(tag.size()), SQLITE_TRANSIENT);
    if (sqlite3_step(st->get()) != SQLITE_DONE) return SqlError(db.get(), "insert");
    row.row_id = sqlite3_last_insert_rowid(db.get());
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace bulwark::attack
