// CopyStoreRows (see store_copy.h): a reader and a writer per engine, and the list of tables with
// their columns (the same in both engines: doc/store_format.md, storage/postgresql/).
#include "storage/store_copy.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>

#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/status_macros.h"
#include "storage/postgresql/pg_connection.h"
#include "storage/sqlite/sqlite_entry_rows.h"
#include "storage/sqlite/sqlite_event_rows.h"
#include "storage/sqlite/sqlite_util.h"
#include "storage/sqlite/vector_codec.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"
#include "storage/stored_report.h"

namespace bulwark {
namespace {

using pg::PgParam;
using Row = std::vector<PgParam>;  // one field per column: Int, Text, Bytes or Null
using BatchFn = std::function<absl::Status(std::span<const Row>)>;

constexpr size_t kBatchRows = 1000;

// One table: its columns and, per column, its type (i: integer, t: text, b: bytes, n: bytes or
// NULL). `order` is the key the rows are read in; `audit`: SQLite keeps it in audit.db.
struct TableSpec {
  const char* name;
  const char* columns;
  const char* types;
  const char* order;
  bool audit = false;
};

// Meta first (the writer replaces the target's), entries before history, as a reader of the
// target would expect them.
constexpr TableSpec kTables[] = {
    {"meta", "key, value", "tt", "key"},
    {"entries",
     "row_id, id, namespace, text, metadata, principal, source, kind, state, created_at_us, updated_at_us, "
     "embedding, key_id, tag, report",
     "ittttttttiibibt", "row_id"},
    {"history", "seq, entry_id, namespace, event, actor, at_us, detail, key_id, tag, link_key_id, link",
     "ittttitibib", "seq"},
    {"query_history", "namespace, seq, embedding", "tib", "namespace, seq"},
    {"calibrations", "namespace, calibration", "tt", "namespace"},
    {"idempotency", "namespace, principal, idempotency_key, request_hash, entry_ids, created_at_us", "ttttti",
     "namespace, principal, idempotency_key"},
    {"principals", "name, role, namespaces, revoked, created_at_us, sign_key_id, tag", "tttiiib", "name"},
    {"api_keys", "key_id, principal, secret_sha256, created_at_us, revoked, sign_key_id, tag", "tttiiib",
     "key_id"},
    {"query_gates", "namespace, mode, embedder, fitted_at_us, source, model, sign_key_id, tag", "tttitbib",
     "namespace"},
    {"honeypot_runs", "run_id, namespace, at_us, batch, metrics, covered_ids, pot_ids, removed_at_us",
     "itiittti", "run_id"},
    {"honeypot_blocks", "key, namespace, state", "btb", "key"},
    {"honeypot_settings", "namespace, mode, k_obs", "tti", "namespace"},
    {"audit",
     "seq, at_us, principal, session, namespace, operation, query_hash, returned_ids, detail, key_id, tag",
     "iitttttttin", "seq", /*audit=*/true},
};

// The engine's own meta rows: written by the target when it was created, never copied.
bool IsEngineMeta(const Row& row) {
  return !row.empty() && (row[0].value == "format" || row[0].value == "schema_version");
}

absl::Status CheckSpec(const TableSpec& t) {
  const std::vector<std::string> columns = absl::StrSplit(t.columns, ", ");
  if (columns.size() != std::string_view(t.types).size()) {
    return absl::InternalError(absl::StrCat("table ", t.name, ": columns and types differ in count"));
  }
  return absl::OkStatus();
}

std::string Placeholders(size_t n, bool postgres) {
  std::string out;
  for (size_t i = 1; i <= n; ++i)
    absl::StrAppend(&out, i > 1 ? ", " : "", postgres ? absl::StrCat("$", i) : "?");
  return out;
}

class Reader {
 public:
  virtual ~Reader() = default;
  // Calls `batch` with the table's rows in `order`, at most kBatchRows at a time.
  virtual absl::Status Scan(const TableSpec& table, const BatchFn& batch) = 0;
};

class Writer {
 public:
  virtual ~Writer() = default;
  // Starts the transactions; FailedPrecondition if any table other than meta holds rows.
  virtual absl::Status Begin() = 0;
  virtual absl::Status Write(const TableSpec& table, std::span<const Row> rows) = 0;
  virtual absl::Status Commit() = 0;
};

// ---- SQLite ----

Row ReadSqliteRow(const Statement& st, const TableSpec& t) {
  Row row;
  const std::string_view types = t.types;
  for (size_t c = 0; c < types.size(); ++c) {
    const int col = static_cast<int>(c);
    if (types[c] == 'i') {
      row.push_back(PgParam::Int(st.Int(col)));
    } else if (types[c] == 't') {
      row.push_back(PgParam::Text(st.TextView(col)));
    } else if (types[c] == 'n' && st.IsNull(col)) {
      row.push_back(PgParam::Null());
    } else {
      row.push_back(PgParam::Bytes(st.BlobView(col)));
    }
  }
  return row;
}

// SQLite stores two things by reference (schema version 6, sqlite_event_rows.h, stored_report.h):
// a passed write's report as an empty column, and the members of an add's or update's detail
// that its entry row still holds. The copy carries every row whole, as the other engine (and a
// reader of the rows) expects them: the history is read through the events' decoder and the
// report is spelled out. Since version 7 an entry's vector may be packed (vector_codec.h); the copy
// carries it raw, as PostgreSQL stores it (a packed value that does not decode is copied as it is,
// and the target's verify reports that row as SQLite's would).
constexpr char kHistoryTable[] = "history";
constexpr int kEntriesEmbeddingColumn = 11;
constexpr int kEntriesReportColumn = 14;

Row ReadSqliteHistoryRow(const Statement& st) {
  const HistoryEvent ev = sqlite_rows::DecodeEvent(st);
  Row row;
  row.push_back(PgParam::Int(ev.seq));
  row.push_back(PgParam::Text(ev.entry_id));
  row.push_back(PgParam::Text(ev.name_space));
  row.push_back(PgParam::Text(ev.event));
  row.push_back(PgParam::Text(ev.actor));
  row.push_back(PgParam::Int(ev.at_us));
  row.push_back(PgParam::Text(ev.detail.dump()));
  row.push_back(PgParam::Int(st.Int(7)));
  row.push_back(PgParam::Bytes(st.BlobView(8)));
  constexpr int kLinkKeyId = sqlite_rows::kEventColumnCount, kLink = sqlite_rows::kEventColumnCount + 1;
  row.push_back(PgParam::Int(st.Int(kLinkKeyId)));  // as ReadSqliteRow reads the table's "i" and "b"
  row.push_back(PgParam::Bytes(st.BlobView(kLink)));
  return row;
}

std::string SqliteSelect(const TableSpec& t) {
  if (std::string_view(t.name) == kHistoryTable) {
    return absl::StrCat("SELECT ", sqlite_rows::kEventColumns,
                        ", link_key_id, link FROM history ORDER BY seq");
  }
  return absl::StrCat("SELECT ", t.columns, " FROM ", t.name, " ORDER BY ", t.order);
}

Row ReadSqliteTableRow(const Statement& st, const TableSpec& t) {
  if (std::string_view(t.name) == kHistoryTable) return ReadSqliteHistoryRow(st);
  Row row = ReadSqliteRow(st, t);
  if (std::string_view(t.name) != "entries") return row;
  if (row[kEntriesReportColumn].value.empty())
    row[kEntriesReportColumn] = PgParam::Text(PassedReport().dump());
  std::vector<float> vector;
  if (sqlite_rows::DecodeStoredVector(row[kEntriesEmbeddingColumn].value, &vector).ok()) {
    row[kEntriesEmbeddingColumn] = PgParam::Bytes(sqlite_rows::EmbeddingBytes(vector));
  }
  return row;
}

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using SqlitePtr = std::unique_ptr<sqlite3, SqliteCloser>;

class SqliteReader : public Reader {
 public:
  explicit SqliteReader(StoreLayout layout) : layout_(std::move(layout)) {}

  absl::Status Scan(const TableSpec& t, const BatchFn& batch) override {
    const std::filesystem::path path = t.audit ? layout_.audit_database() : layout_.database();
    std::error_code ec;
    if (t.audit && !std::filesystem::exists(path, ec)) return absl::OkStatus();  // a store without a log yet
    sqlite3* raw = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    SqlitePtr db(raw);
    if (rc != SQLITE_OK) return absl::UnavailableError(absl::StrCat("cannot open ", path.string()));
    sqlite3_busy_timeout(db.get(), 5000);
    Statement st(db.get(), SqliteSelect(t));
    BULWARK_RETURN_IF_ERROR(st.status());
    std::vector<Row> rows;
    int step;
    while ((step = st.Step()) == SQLITE_ROW) {
      rows.push_back(ReadSqliteTableRow(st, t));
      if (rows.size() == kBatchRows) {
        BULWARK_RETURN_IF_ERROR(batch(rows));
        rows.clear();
      }
    }
    if (step != SQLITE_DONE) return SqliteError(db.get(), absl::StrCat("read table ", t.name));
    return rows.empty() ? absl::OkStatus() : batch(rows);
  }

 private:
  StoreLayout layout_;
};

class SqliteWriter : public Writer {
 public:
  explicit SqliteWriter(StoreLayout layout) : layout_(std::move(layout)) {}

  absl::Status Begin() override {
    BULWARK_ASSIGN_OR_RETURN(sqlite3 * store, OpenExistingDatabase(layout_.database(), ""));
    store_.reset(store);
    BULWARK_ASSIGN_OR_RETURN(sqlite3 * audit, OpenExistingDatabase(layout_.audit_database(), ""));
    audit_.reset(audit);
    store_txn_ = std::make_unique<Transaction>(store_.get());
    BULWARK_RETURN_IF_ERROR(store_txn_->status());
    audit_txn_ = std::make_unique<Transaction>(audit_.get());
    BULWARK_RETURN_IF_ERROR(audit_txn_->status());
    for (const TableSpec& t : kTables) {
      if (std::string_view(t.name) == "meta") continue;
      Statement st(Db(t), absl::StrCat("SELECT 1 FROM ", t.name, " LIMIT 1"));
      BULWARK_RETURN_IF_ERROR(st.status());
      const int rc = st.Step();
      if (rc == SQLITE_ROW)
        return absl::FailedPreconditionError(absl::StrCat("the target's ", t.name, " is not empty"));
      if (rc != SQLITE_DONE) return SqliteError(Db(t), "check that the target is empty");
    }
    return Exec(store_.get(), "DELETE FROM meta WHERE key NOT IN ('format', 'schema_version')");
  }

  absl::Status Write(const TableSpec& t, std::span<const Row> rows) override {
    Statement st(Db(t), absl::StrCat("INSERT INTO ", t.name, "(", t.columns, ") VALUES(",
                                     Placeholders(std::string_view(t.types).size(), false), ")"));
    BULWARK_RETURN_IF_ERROR(st.status());
    for (const Row& row : rows) {
      for (size_t c = 0; c < row.size(); ++c) {
        const int i = static_cast<int>(c) + 1;
        const PgParam& v = row[c];
        if (v.null) continue;  // Reset leaves every parameter NULL
        if (v.integer) {
          st.Bind(i, v.number);
        } else if (v.binary) {
          st.BindBlob(i, v.value.data(), v.value.size());
        } else {
          st.Bind(i, v.value);
        }
      }
      BULWARK_RETURN_IF_ERROR(st.Run(absl::StrCat("copy a row into ", t.name)));
      st.Reset();
    }
    return absl::OkStatus();
  }

  absl::Status Commit() override {
    BULWARK_RETURN_IF_ERROR(store_txn_->Commit());
    return audit_txn_->Commit();
  }

  ~SqliteWriter() override {
    audit_txn_.reset();  // roll back before the connections close
    store_txn_.reset();
  }

 private:
  sqlite3* Db(const TableSpec& t) const { return t.audit ? audit_.get() : store_.get(); }

  StoreLayout layout_;
  SqlitePtr store_;
  SqlitePtr audit_;
  std::unique_ptr<Transaction> store_txn_;
  std::unique_ptr<Transaction> audit_txn_;
};

// ---- PostgreSQL ----

Row ReadPgRow(const pg::PgResult& r, int i, const TableSpec& t) {
  Row row;
  const std::string_view types = t.types;
  for (size_t c = 0; c < types.size(); ++c) {
    const int col = static_cast<int>(c);
    if (types[c] == 'i') {
      row.push_back(PgParam::Int(r.Int(i, col)));
    } else if (types[c] == 't') {
      row.push_back(PgParam::Text(r.View(i, col)));
    } else if (types[c] == 'n' && r.IsNull(i, col)) {
      row.push_back(PgParam::Null());
    } else {
      row.push_back(PgParam::Bytes(r.View(i, col)));
    }
  }
  return row;
}

class PgReader : public Reader {
 public:
  explicit PgReader(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}

  // One snapshot per table, read through a cursor.
  absl::Status Scan(const TableSpec& t, const BatchFn& batch) override {
    pg::PgTransaction txn(*conn_, pg::PgTransaction::Mode::kRepeatableReadOnly);
    BULWARK_RETURN_IF_ERROR(txn.status());
    BULWARK_RETURN_IF_ERROR(conn_->Exec(absl::StrCat("DECLARE copy_rows BINARY NO SCROLL CURSOR FOR SELECT ",
                                                     t.columns, " FROM ", t.name, " ORDER BY ", t.order)));
    const std::string fetch = absl::StrCat("FETCH ", kBatchRows, " FROM copy_rows");
    while (true) {
      BULWARK_ASSIGN_OR_RETURN(const pg::PgResult r, conn_->Query(fetch));
      std::vector<Row> rows;
      rows.reserve(r.rows());
      for (int i = 0; i < r.rows(); ++i) rows.push_back(ReadPgRow(r, i, t));
      if (!rows.empty()) BULWARK_RETURN_IF_ERROR(batch(rows));
      if (r.rows() < static_cast<int>(kBatchRows)) break;
    }
    return txn.Commit();
  }

 private:
  std::unique_ptr<pg::PgConnection> conn_;
};

class PgWriter : public Writer {
 public:
  explicit PgWriter(std::unique_ptr<pg::PgConnection> conn) : conn_(std::move(conn)) {}

  absl::Status Begin() override {
    txn_ = std::make_unique<pg::PgTransaction>(*conn_);
    BULWARK_RETURN_IF_ERROR(txn_->status());
    for (const TableSpec& t : kTables) {
      if (std::string_view(t.name) == "meta") continue;
      BULWARK_ASSIGN_OR_RETURN(const pg::PgResult r,
                               conn_->Query(absl::StrCat("SELECT 1 FROM ", t.name, " LIMIT 1")));
      if (r.rows() > 0)
        return absl::FailedPreconditionError(absl::StrCat("the target's ", t.name, " is not empty"));
    }
    return conn_->Exec("DELETE FROM meta WHERE key NOT IN ('format', 'schema_version')");
  }

  absl::Status Write(const TableSpec& t, std::span<const Row> rows) override {
    return conn_->CopyIn(absl::StrCat(t.name, "(", t.columns, ")"), rows);
  }

  // Moves the counters past the copied rows, then commits.
  absl::Status Commit() override {
    BULWARK_RETURN_IF_ERROR(
        conn_->Exec("UPDATE history_counter SET last_seq = (SELECT COALESCE(MAX(seq), 0) FROM history); "
                    "SELECT setval(pg_get_serial_sequence('entries', 'row_id'), "
                    "COALESCE((SELECT MAX(row_id) FROM entries), 0) + 1, false); "
                    "SELECT setval(pg_get_serial_sequence('honeypot_runs', 'run_id'), "
                    "COALESCE((SELECT MAX(run_id) FROM honeypot_runs), 0) + 1, false)"));
    return txn_->Commit();
  }

  ~PgWriter() override { txn_.reset(); }

 private:
  std::unique_ptr<pg::PgConnection> conn_;
  std::unique_ptr<pg::PgTransaction> txn_;
};

absl::StatusOr<std::unique_ptr<Reader>> OpenReader(std::string_view location) {
  if (!IsPostgresLocation(location)) {
    return std::unique_ptr<Reader>(new SqliteReader(StoreLayout(std::string(location))));
  }
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(location));
  return std::unique_ptr<Reader>(new PgReader(std::move(conn)));
}

absl::StatusOr<std::unique_ptr<Writer>> OpenWriter(std::string_view location) {
  if (!IsPostgresLocation(location)) {
    return std::unique_ptr<Writer>(new SqliteWriter(StoreLayout(std::string(location))));
  }
  BULWARK_ASSIGN_OR_RETURN(auto conn, pg::PgConnection::Open(location));
  return std::unique_ptr<Writer>(new PgWriter(std::move(conn)));
}

}  // namespace

absl::StatusOr<std::vector<CopiedTable>> CopyStoreRows(std::string_view from, std::string_view to) {
  for (const TableSpec& t : kTables) BULWARK_RETURN_IF_ERROR(CheckSpec(t));
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<Reader> reader, OpenReader(from));
  BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<Writer> writer, OpenWriter(to));
  BULWARK_RETURN_IF_ERROR(writer->Begin());
  std::vector<CopiedTable> copied;
  for (const TableSpec& t : kTables) {
    CopiedTable& counted = copied.emplace_back(CopiedTable{t.name, 0});
    BULWARK_RETURN_IF_ERROR(reader->Scan(t, [&](std::span<const Row> rows) -> absl::Status {
      std::vector<Row> kept;
      for (const Row& row : rows) {
        if (std::string_view(t.name) == "meta" && IsEngineMeta(row)) continue;
        kept.push_back(row);
      }
      counted.rows += static_cast<int64_t>(kept.size());
      return kept.empty() ? absl::OkStatus() : writer->Write(t, kept);
    }));
  }
  BULWARK_RETURN_IF_ERROR(writer->Commit());
  return copied;
}

}  // namespace bulwark
