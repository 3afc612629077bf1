// `bulwark serve` (see serve.h).
#include "server/serve.h"

#include <absl/strings/str_cat.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <ostream>
#include <thread>

#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "bulwark/memory_store.h"
#include "gate/gate_registry.h"
#include "llm/chat_client.h"
#include "retrieval/defended_retriever.h"
#include "server/log_format.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"
#include "storage/store_layout.h"
#include "store/expiry_sweeper.h"
#include "store/memory_store_impl.h"

namespace bulwark::server {
namespace {

int Fail(std::ostream& err, const absl::Status& status, std::string_view context) {
  err << "error: " << context << ": " << status.message() << "\n";
  return 1;
}

void Emit(std::ostream& out, bool json, const nlohmann::json& event, const std::string& text) {
  if (json) {
    out << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    out << text << "\n";
  }
  out.flush();
}

void WarnInsecure(std::ostream& err, const ServerOptions& o) {
  err << "\n"
      << "**********************************************************************\n"
      << "*  WARNING: --insecure-dev                                           *\n"
      << "*  Requests WITHOUT an API key act as an ADMIN on EVERY namespace.   *\n"
      << "*  Anyone who can reach " << o.host << " can read, change and erase every memory.\n"
      << "*  Use only for local development; never expose this server.        *\n"
      << "**********************************************************************\n\n";
  err.flush();
  spdlog::warn("--insecure-dev: unauthenticated requests are admins on every namespace");
}

// Blocks SIGINT and SIGTERM in the calling thread for its lifetime. Created before any thread of
// the service starts (the audit writer, the workers), so all of them inherit the mask and a stop
// signal is only ever consumed by the sigwait thread.
class StopSignalMask {
 public:
  StopSignalMask() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &previous_);
  }
  ~StopSignalMask() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  const sigset_t& signals() const { return signals_; }

 private:
  sigset_t signals_;
  sigset_t previous_;
};

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

int RunServe(const ServeOptions& options, std::ostream& out, std::ostream& err) {
  if (absl::Status format = SetLogFormat(options.log_format); !format.ok())
    return Fail(err, format, "log format");
  const ServerOptions& so = options.server;
  if (so.insecure_dev && !IsLoopbackHost(so.host)) {
    err << "error: --insecure-dev is refused on a non-loopback host (" << so.host
        << "); it would give every network peer admin rights\n";
    return 2;
  }

  const StopSignalMask mask;
  std::signal(SIGPIPE, SIG_IGN);
  // Everything the service creates -- the store directory, its SQLite files and their -wal/-shm
  // companions, audit.db -- is for this user alone: 0700 directories, 0600 files (issue #18 9).
  ::umask(077);

  // The store: open it, or create it on first start.
  bool fresh = false;
  auto store = MemoryStore::Open(options.store_dir, options.store);
  if (!store.ok() && store.status().code() == absl::StatusCode::kNotFound) {
    store = MemoryStore::Create(options.store_dir, options.store);
    fresh = store.ok();
  }
  if (!store.ok()) return Fail(err, store.status(), absl::StrCat("store ", options.store_dir.string()));
  if (fresh) {
    auto stats = (*store)->Stats();
    if (!stats.ok()) return Fail(err, stats.status(), "store");
    Emit(out, options.json,
         {{"event", "store_created"},
          {"store", options.store_dir.string()},
          {"embedder", stats->embedder.ToString()},
          {"signing_key_id", stats->newest_key_id}},
         absl::StrCat("created store ", options.store_dir.string(), " (embedder ", stats->embedder.ToString(),
                      ", signing key ", stats->newest_key_id, ")"));
  }

  // Issue #18 point 9: a database that fails the engine's integrity check serves reads but no
  // writes until an admin's verify passes (POST /v1/admin/verify or `bulwark verify`).
  if (absl::Status integrity = (*store)->impl().entries->CheckIntegrityOrFreeze(); !integrity.ok()) {
    if (integrity.code() != absl::StatusCode::kDataLoss) return Fail(err, integrity, "integrity check");
    spdlog::error("{}; writes are refused until an admin runs verify", std::string(integrity.message()));
    Emit(out, options.json, {{"event", "writes_frozen"}, {"reason", std::string(integrity.message())}},
         absl::StrCat("WRITES FROZEN: ", integrity.message(), "; run verify once the store is repaired"));
  }

  Env* env = options.store.env ? options.store.env : Env::Default();
  const std::filesystem::path db_path = StoreLayout(options.store_dir).database();
  auto registry = PrincipalRegistry::Open(db_path, env, options.store.keyring_path);
  if (!registry.ok()) return Fail(err, registry.status(), "principal registry");
  auto has_admin = (*registry)->HasActiveAdmin();
  if (!has_admin.ok()) return Fail(err, has_admin.status(), "principal registry");
  if (!*has_admin && fresh) {
    Principal admin;
    admin.name = options.admin_name;
    admin.role = Role::kAdmin;
    admin.namespaces = {"*"};
    if (auto s = (*registry)->AddPrincipal(admin); !s.ok())
      return Fail(err, s, "creating the admin principal");
    auto key = (*registry)->CreateKey(admin.name);
    if (!key.ok()) return Fail(err, key.status(), "creating the admin key");
    Emit(out, options.json, {{"event", "admin_created"}, {"principal", admin.name}, {"api_key", *key}},
         absl::StrCat("created admin principal \"", admin.name,
                      "\"; its API key is shown once, store it now:\n    ", *key));
    *has_admin = true;
  }
  if (!*has_admin && !so.insecure_dev) {
    err << "error: refusing to start: the store has no active admin principal with a key.\n"
        << "  create one:  bulwark --store " << options.store_dir.string()
        << " principals add admin --role admin --namespaces '*'\n"
        << "  or, for local development only, start with --insecure-dev\n";
    return 1;
  }
  if (so.insecure_dev) WarnInsecure(err, so);

  // Signed with the store's keyring (the newest key at start; a rotation takes effect at restart).
  auto audit =
      AuditLog::OpenForStore(db_path, 50, AuditLog::kDefaultQueueCapacity, options.store.keyring_path);
  if (!audit.ok()) return Fail(err, audit.status(), "audit log");

  // The read-time defenses: fitted gates and the LLM. (The query history the gates can be fitted
  // on is the store's own, fed by every search the gate does not flag.)
  auto gates = GateStore::Open(db_path, options.store.keyring_path);
  if (!gates.ok()) return Fail(err, gates.status(), "query gates");
  GateRegistry gate_registry(gates->get(), env);
  std::unique_ptr<ChatClient> llm;
  const char* llm_url = std::getenv("BULWARK_LLM_URL");
  if (!options.llm.is_null() || (llm_url != nullptr && *llm_url != '\0')) {
    auto client = ChatClient::FromConfig(options.llm.is_null() ? nlohmann::json::object() : options.llm);
    if (!client.ok()) return Fail(err, client.status(), "llm");
    llm = *std::move(client);
    spdlog::info("llm responder and judge: {} at {}", llm->options().model, llm->options().endpoint.url);
  }
  DefendedRetriever retriever(store->get(), &gate_registry, llm.get(), env);

  // The honeypot monitor (MemPot): its blocks live in the store's database and survive restarts.
  auto honeypot_mode = ParseHoneypotMode(options.honeypot_mode);
  if (!honeypot_mode.ok()) return Fail(err, honeypot_mode.status(), "honeypots");
  auto honeypot_repository = SqliteHoneypotRepository::Open(db_path);
  if (!honeypot_repository.ok()) return Fail(err, honeypot_repository.status(), "honeypots");
  HoneypotGuardOptions guard_options;
  guard_options.default_mode = *honeypot_mode;
  auto guard =
      HoneypotGuard::Create(guard_options, (*store)->impl().entries.get(), honeypot_repository->get(), env);
  if (!guard.ok()) return Fail(err, guard.status(), "honeypots");
  retriever.SetHoneypotGuard(guard->get());

  ServiceBackends backends{store->get(), registry->get(), audit->get(), env, &retriever, gates->get()};
  auto server = HttpServer::Create(so, backends);
  if (!server.ok()) return Fail(err, server.status(), "server");

  // Expired entries are never returned; the sweeper erases them (and old idempotency records).
  ExpirySweeper sweeper(store->get(), env, {.interval_ms = options.expiry_sweep_ms});
  sweeper.Start();

  auto port = (*server)->Bind();
  if (!port.ok()) return Fail(err, port.status(), "listen");
  const std::string url = absl::StrCat(
      "http://", so.host.find(':') != std::string::npos ? "[" + so.host + "]" : so.host, ":", *port);
  Emit(out, options.json, {{"event", "listening"}, {"host", so.host}, {"port", *port}, {"url", url}},
       absl::StrCat("listening on ", url));
  if (so.insecure_dev) spdlog::warn("--insecure-dev is active on {}", url);

  // SIGINT/SIGTERM stop the server; they are waited for on a dedicated thread, so no work happens
  // inside a signal handler.
  std::atomic<bool> serving{true};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&mask.signals(), &sig);
    if (serving.load()) {
      spdlog::info("signal {}: stopping", sig);
      (*server)->Stop();
    }
  });
  absl::Status served = (*server)->Serve();
  serving = false;
  pthread_kill(signal_thread.native_handle(), SIGTERM);  // wakes sigwait if no signal came
  signal_thread.join();

  sweeper.Stop();
  server->reset();
  if (auto s = (*audit)->Flush(); !s.ok()) spdlog::error("audit flush: {}", s.ToString());
  if (!served.ok()) return Fail(err, served, "serve");
  Emit(out, options.json, {{"event", "stopped"}}, "stopped");
  return 0;
}

}  // namespace bulwark::server
