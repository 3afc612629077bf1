// PgConnection: a small RAII wrapper over one libpq connection (PGconn) and its results (PGresult),
// with absl::Status errors, for the PostgreSQL repositories of this folder (issue #17 point 1).
//
// Parameters are sent in text form, except byte strings (PgParam::Bytes: bytea values such as
// embeddings and tags), which are sent in binary form and need no escaping. Results are always
// asked for in binary form: bytea columns arrive as raw bytes, bigint columns as 8 big-endian
// bytes, text columns as their bytes (PgResult decodes each). Statements can be prepared once per
// connection (Prepared) and run in a pipeline (ExecBatch: many executions, one round trip).
//
// Errors (PgStatusFromResult): SQLSTATE 23505 (unique violation) -> AlreadyExists; 40001
// (serialization failure) and 40P01 (deadlock) -> Aborted; a lost or refused connection, the
// SQLSTATE classes 08 (connection exception), 57P (operator intervention: shutdown) and 53
// (insufficient resources: disk full, out of memory, too many connections), 55P03 (lock not
// available) and 25006 (read-only standby) -> Unavailable, as SqliteError maps busy, full and I/O
// errors; XX001 / XX002 (data or index corrupted) -> DataLoss; everything else -> Internal with
// the server's message.
//
// A lost connection (the server died, restarted or failed over) is reopened by the next statement
// run outside a transaction (ReopenIfLost: libpq's PQreset, which tries every host of a multi-host
// connection string again, so `target_session_attrs=read-write` finds a promoted standby), at most
// once per kReopenInterval. Inside a transaction (PgTransaction) it is never reopened: the
// transaction's statements fail with Unavailable, and its COMMIT's outcome is then unknown to this
// process (PgTransaction::Commit). Session state set by Open is set again; prepared statements are
// prepared again on first use. Connections are made with the settings of kDefaultConnectionSettings
// unless the connection string names its own: every attempt is bounded (connect_timeout), and a
// peer host that died or was cut off without closing the connection (power loss, a partition) is
// noticed in bounded time (TCP keepalives when idle or waiting for an answer, tcp_user_timeout
// when sent data stays unacknowledged), after which the call fails with Unavailable. A server
// process that hangs on a live host (SIGSTOP, a stuck disk) is not noticed by these, because its
// kernel still answers TCP: that is what the answer deadline is for. Every statement waits for its
// answer at most answer_timeout() without receiving a byte (kDefaultAnswerTimeout); then the
// connection is shut down, the call fails with Unavailable, and the next statement outside a
// transaction reconnects as above (inside a transaction, its outcome is unknown: as a lost
// connection). The deadline is on silence, not on the whole answer: a long result that keeps
// arriving is never cut.
//
// A PgConnection is not thread-safe (neither is a PGconn): its owner serializes all use.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/functional/function_ref.h>
#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/time/time.h>
#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bulwark::pg {

struct PgConnDeleter {
  void operator()(PGconn* conn) const { PQfinish(conn); }
};
struct PgResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgConnPtr = std::unique_ptr<PGconn, PgConnDeleter>;
using PgResultPtr = std::unique_ptr<PGresult, PgResultDeleter>;

// One statement parameter (or COPY field): text (also used for numbers), raw bytes (bytea, binary
// form) or NULL. An Int also keeps its value, for CopyIn's binary int8 encoding.
struct PgParam {
  static PgParam Text(std::string_view text) {
    PgParam p;
    p.value = std::string(text);
    return p;
  }
  static PgParam Int(int64_t value) {
    PgParam p;
    p.value = std::to_string(value);
    p.integer = true;
    p.number = value;
    return p;
  }
  static PgParam Bytes(std::string_view bytes) {
    PgParam p;
    p.value = std::string(bytes);
    p.binary = true;
    return p;
  }
  static PgParam Null() {
    PgParam p;
    p.null = true;
    return p;
  }

  std::string value;
  bool binary = false;
  bool null = false;
  bool integer = false;
  int64_t number = 0;
};

// The status of a finished command: OK for PGRES_COMMAND_OK / PGRES_TUPLES_OK, otherwise the
// mapped error (see the file comment), prefixed with `what`.
absl::Status PgStatusFromResult(PGconn* conn, const PGresult* result, std::string_view what);
// The absl code for a SQLSTATE (five characters; anything else -> Internal).
absl::StatusCode CodeForSqlState(std::string_view sqlstate);

// A successful query's rows. Accessors take a row and a column index; out-of-range indexes are
// the caller's bug (checked with assertions in libpq: they return empty values).
class PgResult {
 public:
  explicit PgResult(PgResultPtr result) : result_(std::move(result)) {}

  int rows() const { return PQntuples(result_.get()); }
  int columns() const { return PQnfields(result_.get()); }
  bool IsNull(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  // The value's bytes as the server sent them (text and bytea columns: their content).
  std::string_view View(int row, int col) const {
    return {PQgetvalue(result_.get(), row, col), static_cast<size_t>(PQgetlength(result_.get(), row, col))};
  }
  std::string Bytes(int row, int col) const { return std::string(View(row, col)); }
  // An integer column (int2, int4, int8; binary or text form); 0 for NULL or a value that is not
  // one (the schema makes them bigint NOT NULL, so this is only reached by a schema change).
  int64_t Int(int row, int col) const;
  // The count of rows an INSERT / UPDATE / DELETE touched.
  int64_t AffectedRows() const;

 private:
  PgResultPtr result_;
};

// The libpq settings every connection gets unless its connection string names its own (see above):
// a connection attempt gives up after 10 s; an idle connection (or one waiting for an answer)
// whose peer stops answering TCP is dropped after 10 + 3 x 5 = 25 s of silence; data unacknowledged
// for 30 s drops it too (Linux only, as libpq documents).
inline constexpr std::pair<const char*, const char*> kDefaultConnectionSettings[] = {
    {"connect_timeout", "10"},    {"keepalives", "1"},       {"keepalives_idle", "10"},
    {"keepalives_interval", "5"}, {"keepalives_count", "3"}, {"tcp_user_timeout", "30000"}};

// The longest a statement waits without receiving a byte of its answer (see the file comment).
// Every statement of this project is short (no statement waits on a lock held by a slow client:
// transactions are short and never wait on the network), so 30 s of silence means the server is
// stuck, not busy.
inline constexpr absl::Duration kDefaultAnswerTimeout = absl::Seconds(30);

class PgConnection {
 public:
  // Connects with a libpq connection string ("host=... port=... dbname=..." or a
  // postgresql:// URL). Unavailable if the server cannot be reached or refuses the login;
  // InvalidArgument for a malformed connection string.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PgConnection>> Open(std::string_view conninfo);

  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs SQL without parameters (one or more statements, simple query protocol).
  [[nodiscard]] absl::Status Exec(std::string_view sql);
  // Runs one statement with parameters ($1, $2, ...); rows in binary form.
  [[nodiscard]] absl::StatusOr<PgResult> Query(std::string_view sql, std::span<const PgParam> params = {});
  // Prepares `sql` as `name` on this connection. The server's error if it does not parse.
  [[nodiscard]] absl::Status Prepare(std::string_view name, std::string_view sql);
  // Runs the statement prepared as `name`.
  [[nodiscard]] absl::StatusOr<PgResult> ExecPrepared(std::string_view name, std::span<const PgParam> params);
  // Runs `sql` as the prepared statement `name`, preparing it on first use on this connection.
  [[nodiscard]] absl::StatusOr<PgResult> Prepared(std::string_view name, std::string_view sql,
                                                  std::span<const PgParam> params);
  // Runs the prepared statement `name` (from `sql`) once per parameter row, all in one pipeline:
  // one round trip for the batch. Returns each execution's result in order, or the first error
  // (later executions of the batch are then skipped by the server). Inside a transaction the
  // batch belongs to it (a failed batch leaves the transaction aborted: roll back).
  [[nodiscard]] absl::StatusOr<std::vector<PgResult>> ExecBatch(std::string_view name, std::string_view sql,
                                                                std::span<const std::vector<PgParam>> rows);

  // Loads `rows` into `target` ("table(col, col, ...)") with COPY FROM STDIN in binary form: the
  // data streams in one go, far cheaper per row than INSERTs. Each row has one field per column:
  // PgParam::Int for bigint columns, Bytes for bytea, Text for text, Null. All rows or none (the
  // server's error, e.g. AlreadyExists for a duplicate key; inside a transaction it is then
  // aborted).
  [[nodiscard]] absl::Status CopyIn(std::string_view target, std::span<const std::vector<PgParam>> rows);

  // False once the connection is lost (the next statement outside a transaction reopens it).
  bool healthy() const { return PQstatus(conn_.get()) == CONNECTION_OK; }
  PGconn* raw() const { return conn_.get(); }

  // The answer deadline of this connection's statements (see the file comment); > 0.
  absl::Duration answer_timeout() const { return answer_timeout_; }
  void set_answer_timeout(absl::Duration timeout) { answer_timeout_ = timeout; }

  // The least time between two attempts to reopen a lost connection.
  static constexpr absl::Duration kReopenInterval = absl::Milliseconds(50);
  // OK if the connection is up, or was lost and is now reopened (its session state set again).
  // Unavailable, changing nothing, inside a transaction (its statements must not run on a new
  // session), within kReopenInterval of a failed attempt, or when no host accepts (with libpq's
  // message). Every statement of this class calls it first.
  [[nodiscard]] absl::Status ReopenIfLost();
  // How many times the connection was reopened (tests and metrics).
  int64_t reopened() const { return reopened_; }

 private:
  friend class PgTransaction;
  explicit PgConnection(PgConnPtr conn) : conn_(std::move(conn)) {}
  // Sets the session state every statement of this folder relies on (encoding, time zone).
  absl::Status SetSession();
  absl::Status EnsurePrepared(std::string_view name, std::string_view sql);
  // Reads the pipeline's results up to its sync point.
  absl::StatusOr<std::vector<PgResult>> DrainPipeline(size_t expected, std::string_view what);
  // Waits until the command in flight has a result to read (PQisBusy false). Unavailable when the
  // server sent nothing for answer_timeout_ (the connection is then shut down: healthy() is false)
  // or the connection broke.
  absl::Status AwaitAnswer(std::string_view what);
  // The next result of the command in flight, waiting for it as AwaitAnswer; null (with OK) when
  // the command has no more results.
  absl::StatusOr<PgResultPtr> NextResult(std::string_view what);
  // Sends one command with `send` (a PQsend* call; 1 when sent) and reads every result of it, as
  // PQexec returns them (the last one, or the first error), stopping at a COPY's start.
  // Unavailable when the command could not be sent or its answer did not come (AwaitAnswer).
  absl::StatusOr<PgResultPtr> RunCommand(absl::FunctionRef<int(PGconn*)> send, std::string_view what);

  PgConnPtr conn_;
  absl::flat_hash_set<std::string> prepared_;
  int open_transactions_ = 0;  // PgTransactions begun and not ended: no reopen meanwhile
  absl::Time last_failed_reopen_ = absl::InfinitePast();
  absl::Duration answer_timeout_ = kDefaultAnswerTimeout;
  int64_t reopened_ = 0;
};

// BEGIN ... COMMIT on a connection; rolls back on destruction unless committed. Check status()
// before use.
class PgTransaction {
 public:
  enum class Mode { kReadCommitted, kRepeatableReadOnly, kSerializable };
  explicit PgTransaction(PgConnection& conn, Mode mode = Mode::kReadCommitted);
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;

  const absl::Status& status() const { return status_; }
  // COMMIT. Aborted if the server had to roll back (serialization failure); Unavailable if the
  // connection was lost before or during COMMIT (the outcome is then unknown to this process: a
  // caller must not report the write as done). The connection is reopened only after the
  // transaction ends.
  [[nodiscard]] absl::Status Commit();

 private:
  PgConnection& conn_;
  absl::Status status_;
  bool done_ = false;
};

// Runs DDL (CREATE ... IF NOT EXISTS) in one transaction under a transaction-scoped advisory lock
// shared by every repository of this folder, so that processes opening one database at once do
// not race on the catalog (concurrent CREATE IF NOT EXISTS can fail with a unique violation).
// Skipped when `last_relation` (the last table or index `sql` creates) exists: the script ran
// before, whole, and running it again would take table locks (CREATE INDEX IF NOT EXISTS waits for
// every writer in flight).
[[nodiscard]] absl::Status ExecSchema(PgConnection& conn, std::string_view sql,
                                      std::string_view last_relation);

// NotFound unless the database holds a store (the `meta` table PostgresBackend creates): the
// other repositories open only a store the backend made, as the SQLite ones need its file.
[[nodiscard]] absl::Status RequireStore(PgConnection& conn);

}  // namespace bulwark::pg
