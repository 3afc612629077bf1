// Unsigned rows planted directly into the store's SQLite file (through storage/sqlite/raw_sql.h: the
// attacker holds the file, not an API).
#include "attack/unsigned_injection.h"

#include <absl/strings/str_cat.h>

#include <random>

#include "attack/attack.h"
#include "core/status_macros.h"
#include "storage/sqlite/raw_sql.h"
#include "storage/store_layout.h"

namespace bulwark::attack {
namespace {

std::string RandomId(std::mt19937_64& rng) {
  static constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string id = "01";
  for (int i = 0; i < 24; ++i) id += kCrockford[rng() % 32];
  return id;
}

// The newest legitimate rows of the namespace: donors for copied_tag and tampered_text.
struct Donor {
  int64_t row_id;
  std::string id, tag;
  int64_t key_id, created_at;
};

absl::StatusOr<std::vector<Donor>> Donors(RawSqlFile& db, std::string_view name_space) {
  const SqlParam params[] = {SqlParam::Text(name_space)};
  BULWARK_ASSIGN_OR_RETURN(
      auto rows, db.Query("SELECT row_id, id, tag, key_id, created_at_us FROM entries WHERE namespace = ?1 "
                          "AND state = 'active' ORDER BY row_id DESC LIMIT 8",
                          params));
  std::vector<Donor> donors;
  for (const std::vector<SqlValue>& row : rows) {
    donors.push_back({SqlInt(row[0]), SqlBytes(row[1]), SqlBytes(row[2]), SqlInt(row[3]), SqlInt(row[4])});
  }
  return donors;
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
  BULWARK_RETURN_IF_ERROR(embedding.status());
  const std::string blob(reinterpret_cast<const char*>(embedding->data()), embedding->size() * sizeof(float));
  const std::filesystem::path path = StoreLayout(store_dir).database();
  auto db = RawSqlFile::Open(path);
  if (!db.ok()) return absl::InternalError("cannot open " + path.string());
  std::mt19937_64 rng = AttackRng(seed, "unsigned");
  BULWARK_ASSIGN_OR_RETURN(auto donors, Donors(**db, name_space));
  std::vector<UnsignedRow> out;
  size_t next_donor = 0;
  for (UnsignedVariant variant : variants) {
    UnsignedRow row{.variant = variant};
    if (variant == UnsignedVariant::kTamperedText) {
      if (next_donor >= donors.size())
        return absl::FailedPreconditionError("unsigned: no legitimate row to tamper with");
      const Donor& d = donors[next_donor++];
      const SqlParam params[] = {SqlParam::Text(poison_text), SqlParam::Blob(blob), SqlParam::Int(d.row_id)};
      if (auto s =
              (*db)->Query("UPDATE entries SET text = ?1, embedding = ?2 WHERE row_id = ?3", params).status();
          !s.ok()) {
        return absl::InternalError(absl::StrCat("tamper: ", s.message()));
      }
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
    const SqlParam params[] = {SqlParam::Text(row.id),      SqlParam::Text(name_space),
                               SqlParam::Text(poison_text), SqlParam::Int(created_at),
                               SqlParam::Blob(blob),        SqlParam::Int(key_id),
                               SqlParam::Blob(tag)};
    if (auto s =
            (*db)
                ->Query("INSERT INTO entries(id, namespace, text, metadata, principal, source, kind, state, "
                        "created_at_us, updated_at_us, embedding, key_id, tag, report) VALUES "
                        "(?1, ?2, ?3, '{}', 'mallory', 'user', 'memory', 'active', ?4, ?4, ?5, ?6, ?7, '{}')",
                        params)
                .status();
        !s.ok()) {
      return absl::InternalError(absl::StrCat("insert: ", s.message()));
    }
    row.row_id = (*db)->last_insert_rowid();
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace bulwark::attack
