// PgConnection implementation (see pg_connection.h).
#include "storage/postgresql/pg_connection.h"

#include <absl/strings/match.h>
#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/strip.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/status_macros.h"
#include "core/strings.h"

namespace bulwark::pg {
namespace {

// Type oids of the integer types (catalog/pg_type_d.h, stable across versions).
constexpr Oid kInt2Oid = 21;
constexpr Oid kInt4Oid = 23;
constexpr Oid kInt8Oid = 20;

// The most executions sent in one pipeline before its results are read: bounded so that the
// server's replies never fill its socket buffer while this side is still sending (libpq's
// blocking pipeline can otherwise deadlock).
constexpr size_t kMaxPipelineDepth = 256;

// libpq's views of a parameter list; valid while `params` lives.
struct ParamArrays {
  explicit ParamArrays(std::span<const PgParam> params) {
    for (const PgParam& p : params) {
      values.push_back(p.null ? nullptr : p.value.data());
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
  }
  int size() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

std::string ConnectionMessage(PGconn* conn) {
  return std::string(absl::StripTrailingAsciiWhitespace(conn ? PQerrorMessage(conn) : "out of memory"));
}

// Parameters beyond int's range are refused before they reach libpq.
absl::Status CheckParams(std::span<const PgParam> params) {
  if (params.size() > 65535) return absl::InvalidArgumentError("more than 65535 statement parameters");
  for (const PgParam& p : params) {
    if (p.value.size() > (size_t{1} << 30)) return absl::InvalidArgumentError("a parameter is over 1 GiB");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusCode CodeForSqlState(std::string_view sqlstate) {
  if (sqlstate == "23505") return absl::StatusCode::kAlreadyExists;
  if (sqlstate == "40001" || sqlstate == "40P01") return absl::StatusCode::kAborted;
  const absl::string_view state = ToAbsl(sqlstate);
  // As SQLite's busy, locked, full and I/O errors: worth retrying later, elsewhere or after an
  // operator acts (53: out of disk, memory or connections; 55P03: lock not available; 25006: a
  // read-only standby).
  if (absl::StartsWith(state, "08") || absl::StartsWith(state, "57P") || absl::StartsWith(state, "53") ||
      state == "55P03" || state == "25006") {
    return absl::StatusCode::kUnavailable;
  }
  if (state == "XX001" || state == "XX002") return absl::StatusCode::kDataLoss;  // data / index corrupted
  return absl::StatusCode::kInternal;
}

absl::Status PgStatusFromResult(PGconn* conn, const PGresult* result, std::string_view what) {
  const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return absl::OkStatus();
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat(ToAbsl(what), ": connection to PostgreSQL lost: ", ConnectionMessage(conn)));
  }
  if (status == PGRES_PIPELINE_ABORTED) {
    return absl::AbortedError(absl::StrCat(ToAbsl(what), ": skipped after an earlier error in the batch"));
  }
  const char* sqlstate = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const char* message = result ? PQresultErrorMessage(result) : nullptr;
  std::string text = message && *message ? std::string(absl::StripTrailingAsciiWhitespace(message))
                                         : ConnectionMessage(conn);
  const absl::StatusCode code = sqlstate ? CodeForSqlState(sqlstate) : absl::StatusCode::kUnavailable;
  return absl::Status(code, absl::StrCat(ToAbsl(what), ": ", text,
                                         sqlstate ? absl::StrCat(" (SQLSTATE ", sqlstate, ")") : ""));
}

int64_t PgResult::Int(int row, int col) const {
  const std::string_view v = View(row, col);
  if (IsNull(row, col)) return 0;
  if (PQfformat(result_.get(), col) == 0) {
    int64_t value = 0;
    return absl::SimpleAtoi(ToAbsl(v), &value) ? value : 0;
  }
  const Oid type = PQftype(result_.get(), col);
  uint64_t bits = 0;
  for (unsigned char c : v) bits = (bits << 8) | c;  // network byte order
  if (type == kInt8Oid && v.size() == 8) return static_cast<int64_t>(bits);
  if (type == kInt4Oid && v.size() == 4) return static_cast<int32_t>(static_cast<uint32_t>(bits));
  if (type == kInt2Oid && v.size() == 2) return static_cast<int16_t>(static_cast<uint16_t>(bits));
  return 0;
}

int64_t PgResult::AffectedRows() const {
  int64_t n = 0;
  return absl::SimpleAtoi(PQcmdTuples(result_.get()), &n) ? n : 0;
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Open(std::string_view conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(conninfo).c_str(), &error);
  if (options == nullptr) {
    std::string message = error ? std::string(absl::StripTrailingAsciiWhitespace(error)) : "out of memory";
    PQfreemem(error);
    return absl::InvalidArgumentError(absl::StrCat("bad PostgreSQL connection string: ", message));
  }
  PQconninfoFree(options);
  // The defaults (kDefaultConnectionSettings) come before the expanded connection string, which
  // overrides each one it names itself (PQconnectdbParams with expand_dbname).
  const std::string dbname(conninfo);
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  for (const auto& [keyword, value] : kDefaultConnectionSettings) {
    keywords.push_back(keyword);
    values.push_back(value);
  }
  keywords.insert(keywords.end(), {"dbname", nullptr});
  values.insert(values.end(), {dbname.c_str(), nullptr});
  PgConnPtr conn(PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1));
  if (conn == nullptr || PQstatus(conn.get()) != CONNECTION_OK) {
    return absl::UnavailableError(
        absl::StrCat("cannot connect to PostgreSQL: ", ConnectionMessage(conn.get())));
  }
  auto connection = std::unique_ptr<PgConnection>(new PgConnection(std::move(conn)));
  BULWARK_RETURN_IF_ERROR(connection->SetSession());
  return connection;
}

absl::Status PgConnection::SetSession() {
  // Every stored timestamp is an integer; UTC and UTF-8 make text comparisons and messages stable.
  BULWARK_ASSIGN_OR_RETURN(
      PgResultPtr result,
      RunCommand(
          [](PGconn* c) {
            return PQsendQuery(
                c, "SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC'; SET client_min_messages = warning");
          },
          "set session"));
  return PgStatusFromResult(conn_.get(), result.get(), "set session");
}

absl::Status PgConnection::AwaitAnswer(std::string_view what) {
  PGconn* conn = conn_.get();
  absl::Time last_byte = absl::Now();
  while (PQisBusy(conn)) {
    const absl::Duration left = answer_timeout_ - (absl::Now() - last_byte);
    const int fd = PQsocket(conn);
    if (fd < 0 || PQstatus(conn) != CONNECTION_OK) {
      return absl::UnavailableError(
          absl::StrCat(ToAbsl(what), ": connection to PostgreSQL lost: ", ConnectionMessage(conn)));
    }
    if (left <= absl::ZeroDuration()) {
      // The server is alive to TCP but silent (stopped, stuck): give the connection up. shutdown
      // makes libpq read end-of-file and mark it bad; the next statement reconnects.
      shutdown(fd, SHUT_RDWR);
      PQconsumeInput(conn);
      return absl::UnavailableError(absl::StrCat(ToAbsl(what), ": no answer from PostgreSQL within ",
                                                 absl::FormatDuration(answer_timeout_),
                                                 "; connection closed"));
    }
    pollfd waiting{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready =
        poll(&waiting, 1, static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 60'000)));
    if (ready < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat(ToAbsl(what), ": poll: ", std::strerror(errno)));
    }
    if (ready > 0) {
      last_byte = absl::Now();
      if (PQconsumeInput(conn) != 1) {
        return absl::UnavailableError(
            absl::StrCat(ToAbsl(what), ": connection to PostgreSQL lost: ", ConnectionMessage(conn)));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PgResultPtr> PgConnection::NextResult(std::string_view what) {
  BULWARK_RETURN_IF_ERROR(AwaitAnswer(what));
  return PgResultPtr(PQgetResult(conn_.get()));
}

absl::StatusOr<PgResultPtr> PgConnection::RunCommand(absl::FunctionRef<int(PGconn*)> send,
                                                     std::string_view what) {
  // Results an earlier call left unread (it returned at an error) would make the send fail, as
  // PQexec would not: read them first.
  while (PQtransactionStatus(conn_.get()) == PQTRANS_ACTIVE) {
    BULWARK_ASSIGN_OR_RETURN(PgResultPtr stale, NextResult(what));
    if (stale == nullptr) break;
  }
  if (send(conn_.get()) != 1) {
    return absl::UnavailableError(
        absl::StrCat(ToAbsl(what), ": cannot send to PostgreSQL: ", ConnectionMessage(conn_.get())));
  }
  PgResultPtr kept;
  while (true) {
    BULWARK_ASSIGN_OR_RETURN(PgResultPtr result, NextResult(what));
    if (result == nullptr) break;
    const ExecStatusType status = PQresultStatus(result.get());
    if (status == PGRES_COPY_IN || status == PGRES_COPY_OUT || status == PGRES_COPY_BOTH) return result;
    const bool kept_error = kept != nullptr && PQresultStatus(kept.get()) == PGRES_FATAL_ERROR;
    if (!kept_error) kept = std::move(result);  // PQexec's rule: the last result, or the error
  }
  return kept;
}

absl::Status PgConnection::ReopenIfLost() {
  if (healthy()) return absl::OkStatus();
  if (open_transactions_ > 0) {
    return absl::UnavailableError(
        absl::StrCat("connection to PostgreSQL lost inside a transaction: ", ConnectionMessage(conn_.get())));
  }
  const absl::Time now = absl::Now();
  if (now - last_failed_reopen_ < kReopenInterval) {
    return absl::UnavailableError(
        absl::StrCat("connection to PostgreSQL lost; reconnecting: ", ConnectionMessage(conn_.get())));
  }
  PQreset(conn_.get());  // every host of the connection string again, bounded by connect_timeout
  prepared_.clear();     // a new session has none
  absl::Status s = healthy() ? SetSession()
                             : absl::UnavailableError(absl::StrCat("cannot reconnect to PostgreSQL: ",
                                                                   ConnectionMessage(conn_.get())));
  if (!s.ok()) {
    last_failed_reopen_ = now;
    return s;
  }
  ++reopened_;
  return absl::OkStatus();
}

absl::Status PgConnection::Exec(std::string_view sql) {
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());
  BULWARK_ASSIGN_OR_RETURN(
      PgResultPtr result,
      RunCommand([&](PGconn* c) { return PQsendQuery(c, std::string(sql).c_str()); }, "exec"));
  return PgStatusFromResult(conn_.get(), result.get(), "exec");
}

absl::StatusOr<PgResult> PgConnection::Query(std::string_view sql, std::span<const PgParam> params) {
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());
  BULWARK_RETURN_IF_ERROR(CheckParams(params));
  ParamArrays a(params);
  BULWARK_ASSIGN_OR_RETURN(PgResultPtr result, RunCommand(
                                                   [&](PGconn* c) {
                                                     return PQsendQueryParams(
                                                         c, std::string(sql).c_str(), a.size(), nullptr,
                                                         a.values.data(), a.lengths.data(), a.formats.data(),
                                                         /*resultFormat=*/1);
                                                   },
                                                   "query"));
  BULWARK_RETURN_IF_ERROR(PgStatusFromResult(conn_.get(), result.get(), "query"));
  return PgResult(std::move(result));
}

absl::Status PgConnection::Prepare(std::string_view name, std::string_view sql) {
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());
  BULWARK_ASSIGN_OR_RETURN(PgResultPtr result, RunCommand(
                                                   [&](PGconn* c) {
                                                     return PQsendPrepare(c, std::string(name).c_str(),
                                                                          std::string(sql).c_str(), 0,
                                                                          nullptr);
                                                   },
                                                   name));
  BULWARK_RETURN_IF_ERROR(
      PgStatusFromResult(conn_.get(), result.get(), absl::StrCat("prepare ", ToAbsl(name))));
  prepared_.insert(std::string(name));
  return absl::OkStatus();
}

absl::Status PgConnection::EnsurePrepared(std::string_view name, std::string_view sql) {
  if (prepared_.contains(ToAbsl(name))) return absl::OkStatus();
  return Prepare(name, sql);
}

absl::StatusOr<PgResult> PgConnection::ExecPrepared(std::string_view name, std::span<const PgParam> params) {
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());
  BULWARK_RETURN_IF_ERROR(CheckParams(params));
  ParamArrays a(params);
  BULWARK_ASSIGN_OR_RETURN(PgResultPtr result, RunCommand(
                                                   [&](PGconn* c) {
                                                     return PQsendQueryPrepared(
                                                         c, std::string(name).c_str(), a.size(),
                                                         a.values.data(), a.lengths.data(), a.formats.data(),
                                                         /*resultFormat=*/1);
                                                   },
                                                   name));
  BULWARK_RETURN_IF_ERROR(PgStatusFromResult(conn_.get(), result.get(), name));
  return PgResult(std::move(result));
}

absl::StatusOr<PgResult> PgConnection::Prepared(std::string_view name, std::string_view sql,
                                                std::span<const PgParam> params) {
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());  // before EnsurePrepared: a new session has none
  BULWARK_RETURN_IF_ERROR(EnsurePrepared(name, sql));
  return ExecPrepared(name, params);
}

absl::StatusOr<std::vector<PgResult>> PgConnection::DrainPipeline(size_t expected, std::string_view what) {
  std::vector<PgResult> results;
  absl::Status first_error;
  for (size_t i = 0; i < expected; ++i) {
    BULWARK_ASSIGN_OR_RETURN(PgResultPtr result, NextResult(what));
    if (result == nullptr)
      return absl::UnavailableError(absl::StrCat(ToAbsl(what), ": pipeline ended early"));
    if (auto s = PgStatusFromResult(conn_.get(), result.get(), what); !s.ok() && first_error.ok()) {
      first_error = s;
    }
    if (first_error.ok()) results.emplace_back(std::move(result));
    BULWARK_ASSIGN_OR_RETURN(PgResultPtr end, NextResult(what));  // NULL after each query's result
    if (end != nullptr)
      return absl::InternalError(absl::StrCat(ToAbsl(what), ": more than one result per execution"));
  }
  BULWARK_ASSIGN_OR_RETURN(PgResultPtr sync, NextResult(what));
  if (sync == nullptr || PQresultStatus(sync.get()) != PGRES_PIPELINE_SYNC) {
    return absl::UnavailableError(absl::StrCat(ToAbsl(what), ": pipeline lost its sync point"));
  }
  if (!first_error.ok()) return first_error;
  return results;
}

absl::StatusOr<std::vector<PgResult>> PgConnection::ExecBatch(std::string_view name, std::string_view sql,
                                                              std::span<const std::vector<PgParam>> rows) {
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());  // before EnsurePrepared: a new session has none
  BULWARK_RETURN_IF_ERROR(EnsurePrepared(name, sql));
  const std::string stmt(name);
  std::vector<PgResult> all;
  all.reserve(rows.size());
  for (size_t begin = 0; begin < rows.size(); begin += kMaxPipelineDepth) {
    const size_t end = std::min(rows.size(), begin + kMaxPipelineDepth);
    if (PQenterPipelineMode(conn_.get()) != 1) {
      return absl::UnavailableError(
          absl::StrCat(ToAbsl(name), ": cannot enter pipeline mode: ", ConnectionMessage(conn_.get())));
    }
    absl::Status sent;
    size_t queued = 0;
    for (size_t i = begin; i < end && sent.ok(); ++i) {
      if (auto s = CheckParams(rows[i]); !s.ok()) {
        sent = s;
        break;
      }
      ParamArrays a(rows[i]);
      if (PQsendQueryPrepared(conn_.get(), stmt.c_str(), a.size(), a.values.data(), a.lengths.data(),
                              a.formats.data(), /*resultFormat=*/1) != 1) {
        sent = absl::UnavailableError(
            absl::StrCat(ToAbsl(name), ": cannot send: ", ConnectionMessage(conn_.get())));
        break;
      }
      ++queued;
    }
    if (PQpipelineSync(conn_.get()) != 1 && sent.ok()) {
      sent = absl::UnavailableError(
          absl::StrCat(ToAbsl(name), ": cannot sync: ", ConnectionMessage(conn_.get())));
    }
    auto results = DrainPipeline(queued, name);
    PQexitPipelineMode(conn_.get());
    if (!sent.ok()) return sent;
    if (!results.ok()) return results.status();
    for (PgResult& r : *results) all.push_back(std::move(r));
  }
  return all;
}

namespace {

void AppendBigEndian(std::string* out, uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// One row of a binary COPY stream (PostgreSQL docs, "COPY", binary format: a 16-bit field count,
// then per field a 32-bit length (-1 for NULL) and its bytes; int8 as 8 big-endian bytes).
void AppendCopyRow(std::string* out, std::span<const PgParam> row) {
  AppendBigEndian(out, row.size(), 2);
  for (const PgParam& field : row) {
    if (field.null) {
      AppendBigEndian(out, 0xffffffffu, 4);
    } else if (field.integer) {
      AppendBigEndian(out, 8, 4);
      AppendBigEndian(out, static_cast<uint64_t>(field.number), 8);
    } else {
      AppendBigEndian(out, field.value.size(), 4);
      out->append(field.value);
    }
  }
}

}  // namespace

absl::Status PgConnection::CopyIn(std::string_view target, std::span<const std::vector<PgParam>> rows) {
  constexpr size_t kFlushBytes = 1 << 20;
  BULWARK_RETURN_IF_ERROR(ReopenIfLost());
  for (const auto& row : rows) {
    BULWARK_RETURN_IF_ERROR(CheckParams(row));
  }
  BULWARK_ASSIGN_OR_RETURN(
      PgResultPtr start,
      RunCommand(
          [&](PGconn* c) {
            return PQsendQuery(c,
                               absl::StrCat("COPY ", ToAbsl(target), " FROM STDIN (FORMAT binary)").c_str());
          },
          "copy"));
  if (start == nullptr || PQresultStatus(start.get()) != PGRES_COPY_IN) {
    absl::Status s = PgStatusFromResult(conn_.get(), start.get(), "copy");
    return s.ok() ? absl::InternalError("copy: the server did not start COPY IN") : s;
  }
  std::string buffer("PGCOPY\n\xff\r\n\0", 11);
  AppendBigEndian(&buffer, 0, 4);  // flags
  AppendBigEndian(&buffer, 0, 4);  // header extension length
  bool sent = true;
  for (const auto& row : rows) {
    AppendCopyRow(&buffer, row);
    if (buffer.size() >= kFlushBytes) {
      sent = PQputCopyData(conn_.get(), buffer.data(), static_cast<int>(buffer.size())) == 1;
      buffer.clear();
      if (!sent) break;
    }
  }
  AppendBigEndian(&buffer, 0xffff, 2);  // trailer
  if (sent) sent = PQputCopyData(conn_.get(), buffer.data(), static_cast<int>(buffer.size())) == 1;
  const int ended = PQputCopyEnd(conn_.get(), sent ? nullptr : "client failed to send the data");
  absl::Status status;
  while (true) {  // the COPY's result, then NULL
    BULWARK_ASSIGN_OR_RETURN(PgResultPtr result, NextResult("copy"));
    if (result == nullptr) break;
    if (auto s = PgStatusFromResult(conn_.get(), result.get(), "copy"); !s.ok() && status.ok()) status = s;
  }
  if (status.ok() && (!sent || ended != 1)) {
    status = absl::UnavailableError(absl::StrCat("copy: cannot send: ", ConnectionMessage(conn_.get())));
  }
  return status;
}

PgTransaction::PgTransaction(PgConnection& conn, Mode mode) : conn_(conn) {
  const char* begin = "BEGIN";
  if (mode == Mode::kRepeatableReadOnly) begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
  if (mode == Mode::kSerializable) begin = "BEGIN ISOLATION LEVEL SERIALIZABLE";
  status_ = conn_.Exec(begin);
  if (status_.ok()) ++conn_.open_transactions_;
}

PgTransaction::~PgTransaction() {
  if (status_.ok() && !done_) {
    conn_.Exec("ROLLBACK").IgnoreError();  // on a lost connection: Unavailable, nothing to undo
    --conn_.open_transactions_;
  }
}

absl::Status PgTransaction::Commit() {
  if (!status_.ok()) return status_;
  done_ = true;
  --conn_.open_transactions_;
  BULWARK_ASSIGN_OR_RETURN(PgResultPtr result,
                           conn_.RunCommand([](PGconn* c) { return PQsendQuery(c, "COMMIT"); }, "commit"));
  BULWARK_RETURN_IF_ERROR(PgStatusFromResult(conn_.raw(), result.get(), "commit"));
  // COMMIT of a transaction that failed earlier succeeds as a ROLLBACK.
  if (std::strcmp(PQcmdStatus(result.get()), "ROLLBACK") == 0) {
    return absl::AbortedError("commit: the transaction was rolled back after an earlier error");
  }
  return absl::OkStatus();
}

absl::Status ExecSchema(PgConnection& conn, std::string_view sql, std::string_view last_relation) {
  const std::vector<PgParam> name = {PgParam::Text(last_relation)};
  BULWARK_ASSIGN_OR_RETURN(const PgResult exists, conn.Query("SELECT to_regclass($1) IS NOT NULL", name));
  if (exists.View(0, 0) == std::string_view("\x01", 1)) return absl::OkStatus();
  constexpr char kLock[] =
      "SELECT pg_advisory_xact_lock(7099337446126694913)";  // an arbitrary key, the same in every opener
  PgTransaction txn(conn);
  BULWARK_RETURN_IF_ERROR(txn.status());
  BULWARK_RETURN_IF_ERROR(conn.Exec(kLock));
  BULWARK_RETURN_IF_ERROR(conn.Exec(sql));
  return txn.Commit();
}

absl::Status RequireStore(PgConnection& conn) {
  BULWARK_ASSIGN_OR_RETURN(const PgResult found, conn.Query("SELECT to_regclass('meta') IS NOT NULL"));
  if (found.View(0, 0) != std::string_view("\x01", 1)) {
    return absl::NotFoundError("the PostgreSQL database holds no Bulwark store");
  }
  return absl::OkStatus();
}

}  // namespace bulwark::pg
