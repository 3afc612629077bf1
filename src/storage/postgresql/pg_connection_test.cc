#include "storage/postgresql/pg_connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "storage/postgresql/testing/pg_test_environment.h"
#include "testing/status_matchers.h"

namespace bulwark::pg {
namespace {

using ::bulwark::testing::IsOk;
using ::bulwark::testing::StatusIs;
using ::testing::HasSubstr;

class PgConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = bulwark::testing::NewPgTestDatabase();
    ASSERT_THAT(db, IsOk());
    conninfo_ = *db;
    auto conn = PgConnection::Open(conninfo_);
    ASSERT_THAT(conn, IsOk());
    conn_ = *std::move(conn);
    ASSERT_THAT(conn_->Exec("CREATE TABLE t(k TEXT PRIMARY KEY, n BIGINT NOT NULL, b BYTEA NOT NULL)"),
                IsOk());
  }
  std::string conninfo_;
  std::unique_ptr<PgConnection> conn_;
};

TEST(PgErrorMapping, SqlStatesMapToStatusCodes) {
  EXPECT_EQ(CodeForSqlState("23505"), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(CodeForSqlState("40001"), absl::StatusCode::kAborted);
  EXPECT_EQ(CodeForSqlState("40P01"), absl::StatusCode::kAborted);
  EXPECT_EQ(CodeForSqlState("08006"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForSqlState("57P01"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForSqlState("53100"), absl::StatusCode::kUnavailable);  // disk full
  EXPECT_EQ(CodeForSqlState("53300"), absl::StatusCode::kUnavailable);  // too many connections
  EXPECT_EQ(CodeForSqlState("55P03"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForSqlState("25006"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CodeForSqlState("XX001"), absl::StatusCode::kDataLoss);
  EXPECT_EQ(CodeForSqlState("23503"), absl::StatusCode::kInternal);  // a foreign key: a bug, not a retry
  EXPECT_EQ(CodeForSqlState("42601"), absl::StatusCode::kInternal);
  EXPECT_EQ(CodeForSqlState(""), absl::StatusCode::kInternal);
}

TEST(PgConnectionOpen, UnreachableServerIsUnavailableAndBadStringIsInvalid) {
  // Port 1 on loopback: nothing listens there.
  EXPECT_THAT(PgConnection::Open("host=127.0.0.1 port=1 dbname=x connect_timeout=2"),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(PgConnection::Open("host=127.0.0.1 nonsense_option=1"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// The connection's effective settings, as libpq reports them.
std::string SettingOf(const PgConnection& conn, std::string_view keyword) {
  std::string value;
  PQconninfoOption* options = PQconninfo(conn.raw());
  for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o) {
    if (keyword == o->keyword && o->val != nullptr) value = o->val;
  }
  PQconninfoFree(options);
  return value;
}

TEST_F(PgConnectionTest, KeepalivesAreOnByDefaultAndTheConnectionStringOverridesThem) {
  for (const auto& [keyword, value] : kDefaultConnectionSettings) {
    EXPECT_EQ(SettingOf(*conn_, keyword), value) << keyword;
  }
  auto own = PgConnection::Open(conninfo_ + " keepalives_idle=60 tcp_user_timeout=0");
  ASSERT_THAT(own, IsOk());
  EXPECT_EQ(SettingOf(**own, "keepalives_idle"), "60");
  EXPECT_EQ(SettingOf(**own, "tcp_user_timeout"), "0");
  EXPECT_EQ(SettingOf(**own, "keepalives_count"), "3");
}

TEST_F(PgConnectionTest, BinaryBytesAndIntegersRoundTrip) {
  std::string bytes("\0\x01\xff\x80zz", 6);  // NUL and high bytes: only binary form carries them as-is
  const std::vector<PgParam> params = {PgParam::Text("a"), PgParam::Int(-1234567890123),
                                       PgParam::Bytes(bytes)};
  ASSERT_THAT(conn_->Query("INSERT INTO t VALUES($1, $2, $3)", params), IsOk());
  const std::vector<PgParam> key = {PgParam::Text("a")};
  auto got = conn_->Prepared("get", "SELECT k, n, b, length(b) FROM t WHERE k = $1", key);
  ASSERT_THAT(got, IsOk());
  ASSERT_EQ(got->rows(), 1);
  EXPECT_EQ(got->View(0, 0), "a");
  EXPECT_EQ(got->Int(0, 1), -1234567890123);
  EXPECT_EQ(got->Bytes(0, 2), bytes);
  EXPECT_EQ(got->Int(0, 3), 6) << "int4 in binary form";
  // The prepared statement is reused on the second call.
  auto again = conn_->Prepared("get", "ignored: already prepared", key);
  ASSERT_THAT(again, IsOk());
  EXPECT_EQ(again->rows(), 1);
}

TEST_F(PgConnectionTest, UniqueViolationIsAlreadyExistsAndSyntaxErrorIsInternalWithMessage) {
  const std::vector<PgParam> row = {PgParam::Text("a"), PgParam::Int(1), PgParam::Bytes("")};
  ASSERT_THAT(conn_->Query("INSERT INTO t VALUES($1, $2, $3)", row), IsOk());
  EXPECT_THAT(conn_->Query("INSERT INTO t VALUES($1, $2, $3)", row),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(conn_->Exec("SELEC 1"), StatusIs(absl::StatusCode::kInternal, HasSubstr("syntax error")));
}

TEST_F(PgConnectionTest, TransactionRollsBackUnlessCommitted) {
  {
    PgTransaction txn(*conn_);
    ASSERT_THAT(txn.status(), IsOk());
    ASSERT_THAT(conn_->Exec("INSERT INTO t VALUES('gone', 1, '')"), IsOk());
  }
  {
    PgTransaction txn(*conn_);
    ASSERT_THAT(conn_->Exec("INSERT INTO t VALUES('kept', 1, '')"), IsOk());
    ASSERT_THAT(txn.Commit(), IsOk());
  }
  {
    PgTransaction txn(*conn_);
    EXPECT_FALSE(conn_->Exec("INSERT INTO t VALUES('kept', 2, '')").ok());
    EXPECT_THAT(txn.Commit(), StatusIs(absl::StatusCode::kAborted)) << "a failed transaction cannot commit";
  }
  auto rows = conn_->Query("SELECT k FROM t ORDER BY k");
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->rows(), 1);
  EXPECT_EQ(rows->View(0, 0), "kept");
}

TEST_F(PgConnectionTest, BatchRunsEveryRowInOnePipelineAndStopsAtTheFirstError) {
  std::vector<std::vector<PgParam>> rows;
  for (int i = 0; i < 600; ++i) {  // over one pipeline's depth
    rows.push_back(
        {PgParam::Text("k" + std::to_string(i)), PgParam::Int(i), PgParam::Bytes(std::string(64, 'x'))});
  }
  constexpr char kInsert[] = "INSERT INTO t VALUES($1, $2, $3)";
  auto done = conn_->ExecBatch("ins", kInsert, rows);
  ASSERT_THAT(done, IsOk());
  EXPECT_EQ(done->size(), 600u);
  auto sum = conn_->Query("SELECT count(*), sum(n)::bigint FROM t");
  ASSERT_THAT(sum, IsOk());
  EXPECT_EQ(sum->Int(0, 0), 600);
  EXPECT_EQ(sum->Int(0, 1), 599 * 600 / 2);

  // In a transaction, a duplicate in the middle fails the batch and the whole transaction.
  std::vector<std::vector<PgParam>> bad = {{PgParam::Text("new1"), PgParam::Int(1), PgParam::Bytes("")},
                                           {PgParam::Text("k5"), PgParam::Int(1), PgParam::Bytes("")},
                                           {PgParam::Text("new2"), PgParam::Int(1), PgParam::Bytes("")}};
  {
    PgTransaction txn(*conn_);
    EXPECT_THAT(conn_->ExecBatch("ins", kInsert, bad), StatusIs(absl::StatusCode::kAlreadyExists));
  }
  auto count = conn_->Query("SELECT count(*) FROM t");
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(count->Int(0, 0), 600);
  // The connection is usable after the failed pipeline.
  EXPECT_THAT(conn_->Exec("SELECT 1"), IsOk());
}

TEST_F(PgConnectionTest, CopyInLoadsBinaryRowsAllOrNothing) {
  std::vector<std::vector<PgParam>> rows;
  for (int i = 0; i < 3000; ++i) {  // over one flush of the stream
    rows.push_back({PgParam::Text("k" + std::to_string(i) + "\t\\"), PgParam::Int(-i),
                    PgParam::Bytes(std::string(1000, static_cast<char>(i)))});
  }
  ASSERT_THAT(conn_->CopyIn("t(k, n, b)", rows), IsOk());
  auto got = conn_->Query("SELECT count(*), sum(n)::bigint, max(length(b)) FROM t");
  ASSERT_THAT(got, IsOk());
  EXPECT_EQ(got->Int(0, 0), 3000);
  EXPECT_EQ(got->Int(0, 1), -2999 * 3000 / 2);
  EXPECT_EQ(got->Int(0, 2), 1000);
  const std::vector<PgParam> key = {PgParam::Text("k7\t\\")};
  auto one = conn_->Query("SELECT b FROM t WHERE k = $1", key);
  ASSERT_THAT(one, IsOk());
  ASSERT_EQ(one->rows(), 1);
  EXPECT_EQ(one->Bytes(0, 0), std::string(1000, '\x07'));
  // A duplicate key fails the whole COPY; the connection stays usable.
  std::vector<std::vector<PgParam>> dup = {{PgParam::Text("fresh"), PgParam::Int(1), PgParam::Bytes("")},
                                           {PgParam::Text("k1\t\\"), PgParam::Int(1), PgParam::Bytes("")}};
  EXPECT_THAT(conn_->CopyIn("t(k, n, b)", dup), StatusIs(absl::StatusCode::kAlreadyExists));
  auto count = conn_->Query("SELECT count(*) FROM t");
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(count->Int(0, 0), 3000);
  // A NULL in a NOT NULL column is the server's error, not a crash.
  std::vector<std::vector<PgParam>> null_row = {{PgParam::Text("x"), PgParam::Null(), PgParam::Bytes("")}};
  EXPECT_THAT(conn_->CopyIn("t(k, n, b)", null_row), StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(conn_->CopyIn("no_such_table(k)", null_row), StatusIs(absl::StatusCode::kInternal));
}

TEST_F(PgConnectionTest, LockTimeoutIsUnavailable) {
  ASSERT_THAT(conn_->Exec("INSERT INTO t VALUES('a', 1, '')"), IsOk());
  auto other = PgConnection::Open(conninfo_);
  ASSERT_THAT(other, IsOk());
  PgTransaction holder(*conn_);
  ASSERT_THAT(conn_->Exec("UPDATE t SET n = 2 WHERE k = 'a'"), IsOk());
  ASSERT_THAT((*other)->Exec("SET lock_timeout = '50ms'"), IsOk());
  EXPECT_THAT((*other)->Exec("UPDATE t SET n = 3 WHERE k = 'a'"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("55P03")));
}

TEST_F(PgConnectionTest, TerminatedConnectionIsUnavailable) {
  auto pid = conn_->Query("SELECT pg_backend_pid()");
  ASSERT_THAT(pid, IsOk());
  auto other = PgConnection::Open(conninfo_);
  ASSERT_THAT(other, IsOk());
  const std::vector<PgParam> target = {PgParam::Int(pid->Int(0, 0))};
  ASSERT_THAT((*other)->Query("SELECT pg_terminate_backend($1::int)", target), IsOk());
  EXPECT_THAT(conn_->Exec("SELECT 1"), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_FALSE(conn_->healthy());
}

// Kills this connection's server process from another connection; the next statement fails.
void TerminateBackendOf(PgConnection& conn, const std::string& conninfo) {
  auto pid = conn.Query("SELECT pg_backend_pid()");
  ASSERT_THAT(pid, IsOk());
  auto other = PgConnection::Open(conninfo);
  ASSERT_THAT(other, IsOk());
  const std::vector<PgParam> target = {PgParam::Int(pid->Int(0, 0))};
  ASSERT_THAT((*other)->Query("SELECT pg_terminate_backend($1::int, 5000)", target), IsOk());
}

TEST_F(PgConnectionTest, LostConnectionIsReopenedByTheNextStatement) {
  ASSERT_THAT(conn_->Prepared("count_t", "SELECT count(*) FROM t", {}), IsOk());
  TerminateBackendOf(*conn_, conninfo_);
  // The statement that meets the loss fails; the connection then knows it is lost.
  EXPECT_THAT(conn_->Exec("INSERT INTO t VALUES('a', 1, '')"), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_FALSE(conn_->healthy());
  // The next one reopens: a new session, its prepared statements made again on first use, the
  // session settings set again.
  auto count = conn_->Prepared("count_t", "SELECT count(*) FROM t", {});
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(count->Int(0, 0), 0) << "the failed INSERT never ran";
  EXPECT_TRUE(conn_->healthy());
  EXPECT_EQ(conn_->reopened(), 1);
  auto zone = conn_->Query("SELECT current_setting('TimeZone')");
  ASSERT_THAT(zone, IsOk());
  EXPECT_EQ(zone->View(0, 0), "UTC");
}

TEST_F(PgConnectionTest, LostConnectionIsNeverReopenedInsideATransaction) {
  {
    PgTransaction txn(*conn_);
    ASSERT_THAT(txn.status(), IsOk());
    ASSERT_THAT(conn_->Exec("INSERT INTO t VALUES('a', 1, '')"), IsOk());
    TerminateBackendOf(*conn_, conninfo_);
    EXPECT_THAT(conn_->Exec("INSERT INTO t VALUES('b', 2, '')"), StatusIs(absl::StatusCode::kUnavailable));
    // Still inside the transaction: the statement must not run on a new session (in autocommit).
    EXPECT_THAT(conn_->Exec("INSERT INTO t VALUES('c', 3, '')"),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("inside a transaction")));
    EXPECT_THAT(txn.Commit(), StatusIs(absl::StatusCode::kUnavailable));
  }
  auto count = conn_->Query("SELECT count(*) FROM t");
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(count->Int(0, 0), 0) << "nothing of the cut-off transaction is stored";
}

// Stops this connection's server process (SIGSTOP: alive to TCP, silent, as a hung primary) until
// the object is destroyed. stopped() is false where this process may not signal it.
class StoppedBackend {
 public:
  explicit StoppedBackend(PgConnection& conn) {
    auto pid = conn.Query("SELECT pg_backend_pid()");
    if (pid.ok()) pid_ = static_cast<pid_t>(pid->Int(0, 0));
    if (pid_ > 0 && kill(pid_, SIGSTOP) != 0) {
      error_ = std::strerror(errno);
      pid_ = 0;
    }
  }
  ~StoppedBackend() {
    if (pid_ > 0) kill(pid_, SIGCONT);
  }
  StoppedBackend(const StoppedBackend&) = delete;
  StoppedBackend& operator=(const StoppedBackend&) = delete;
  bool stopped() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& error() const { return error_; }

 private:
  pid_t pid_ = 0;
  std::string error_ = "no backend pid";
};

TEST_F(PgConnectionTest, AStatementToAHungServerFailsAtTheAnswerDeadlineAndTheNextOneReconnects) {
  conn_->set_answer_timeout(absl::Milliseconds(300));
  ASSERT_THAT(conn_->Query("SELECT pg_sleep(0.1)"), IsOk()) << "an answer within the deadline";
  pid_t first_backend = 0;
  {
    StoppedBackend hung(*conn_);
    if (!hung.stopped()) GTEST_SKIP() << "cannot stop the server process: " << hung.error();
    first_backend = hung.pid();
    const absl::Time start = absl::Now();
    EXPECT_THAT(conn_->Query("SELECT 1"), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("no answer")));
    const absl::Duration waited = absl::Now() - start;
    EXPECT_GE(waited, absl::Milliseconds(300));
    EXPECT_LT(waited, absl::Seconds(10)) << "the wait is bounded by the deadline, not by the server";
    EXPECT_FALSE(conn_->healthy());
  }
  // Resumed (or not: the next statement does not need the old session) -> a new session.
  auto again = conn_->Query("SELECT pg_backend_pid()");
  ASSERT_THAT(again, IsOk());
  EXPECT_NE(again->Int(0, 0), first_backend);
  EXPECT_EQ(conn_->reopened(), 1);
}

TEST_F(PgConnectionTest, AHungServerInsideATransactionFailsItsCommitAndStoresNothing) {
  conn_->set_answer_timeout(absl::Milliseconds(300));
  {
    PgTransaction txn(*conn_);
    ASSERT_THAT(txn.status(), IsOk());
    ASSERT_THAT(conn_->Exec("INSERT INTO t VALUES('a', 1, '')"), IsOk());
    StoppedBackend hung(*conn_);
    if (!hung.stopped()) GTEST_SKIP() << "cannot stop the server process: " << hung.error();
    EXPECT_THAT(conn_->Exec("INSERT INTO t VALUES('b', 2, '')"),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("no answer")));
    EXPECT_THAT(txn.Commit(), StatusIs(absl::StatusCode::kUnavailable));
  }
  auto count = conn_->Query("SELECT count(*) FROM t");
  ASSERT_THAT(count, IsOk());
  EXPECT_EQ(count->Int(0, 0), 0) << "the transaction cut off by the deadline is not stored";
}

}  // namespace
}  // namespace bulwark::pg
