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
#include <memory>
#include <optional>
#include <ostream>
#include <thread>

#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "core/strings.h"
#include "detect/write_defenses.h"
#include "gate/gate_registry.h"
#include "llm/chat_client.h"
#include "replication/replica_coordinator.h"
#include "retrieval/defended_retriever.h"
#include "server/log_format.h"
#include "server/query_history_forwarding.h"
#include "server/replica_routing.h"
#include "storage/postgresql/postgres_backend.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"
#include "store/expiry_sweeper.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"
#include "write/write_pipeline.h"

namespace bulwark::server {
namespace {

int Fail(std::ostream& err, const absl::Status& status, std::string_view context) {
  err << "error: " << context << ": " << status.message() << "\n";
  return 1;
}

int Fail(std::ostream& err, const absl::Status& status) {  // the message names its context
  err << "error: " << status.message() << "\n";
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

// Everything the service runs on, in the order it is made (and destroyed in reverse: the replica
// coordinator first, the store last).
struct ServiceParts {
  std::unique_ptr<MemoryStore> store;
  bool fresh = false;  // the store was created by this start
  std::unique_ptr<PrincipalRegistry> registry;
  std::unique_ptr<AuditLog> audit;
  std::unique_ptr<GateStore> gates;
  std::unique_ptr<GateRegistry> gate_registry;
  std::unique_ptr<ChatClient> llm;
  std::unique_ptr<DefendedRetriever> retriever;
  std::unique_ptr<HoneypotRepository> honeypot_repository;
  std::unique_ptr<HoneypotGuard> guard;
  std::unique_ptr<ReplicaRouting> routing;
  std::unique_ptr<QueryHistoryReceiver> query_receiver;
  std::unique_ptr<ReplicaCoordinator> coordinator;
  std::unique_ptr<QueryHistoryForwarder> query_forwarder;  // stopped before the coordinator goes
};

absl::Status WithContext(const absl::Status& status, std::string_view context) {
  return absl::Status(status.code(), absl::StrCat(ToAbsl(context), ": ", status.message()));
}

// Opens the store, or creates it on first start, and runs its integrity check.
absl::Status OpenStore(const ServeOptions& options, ServiceParts* parts, std::ostream& out) {
  const std::string where = DisplayLocation(options.store_dir.string());
  StoreOptions store_options = options.store;
  // A replica holds only the namespaces placed on it (StartReplica loads them).
  const bool replicated = !options.replication.replica_id.empty();
  if (replicated) store_options.hold_all_namespaces = false;
  auto store = MemoryStore::Open(options.store_dir, store_options);
  if (!store.ok() && store.status().code() == absl::StatusCode::kNotFound) {
    store = MemoryStore::Create(options.store_dir, store_options);
    parts->fresh = store.ok();
  }
  if (!store.ok()) return WithContext(store.status(), absl::StrCat("store ", where));
  parts->store = *std::move(store);
  // The write gate's rules and models are built now, not by the first write after start (which
  // would pay ~0.25 s of compiling in latency and in its caller's rate-limit tokens).
  parts->store->impl().defenses->gate().Prepare();
  if (replicated) {
    // No write path writes a namespace this replica does not lead (Mem0, MCP, the sweeper, the
    // write gate's state): the lease's fence is required for every namespace write.
    auto* backend = dynamic_cast<PostgresBackend*>(&parts->store->impl().entries->backend());
    if (backend == nullptr)
      return absl::InvalidArgumentError("--replica-id needs a PostgreSQL store (--backend)");
    backend->RequireFences(true);
  }
  if (parts->fresh) {
    auto stats = parts->store->Stats();
    if (!stats.ok()) return WithContext(stats.status(), "store");
    Emit(out, options.json,
         {{"event", "store_created"},
          {"store", where},
          {"embedder", stats->embedder.ToString()},
          {"signing_key_id", stats->newest_key_id}},
         absl::StrCat("created store ", where, " (embedder ", stats->embedder.ToString(), ", signing key ",
                      stats->newest_key_id, ")"));
  }
  // Issue #18 point 9: a database that fails the engine's integrity check serves reads but no
  // writes until an admin's verify passes (POST /v1/admin/verify or `bulwark verify`).
  if (absl::Status integrity = parts->store->impl().entries->CheckIntegrityOrFreeze(); !integrity.ok()) {
    if (integrity.code() != absl::StatusCode::kDataLoss) return WithContext(integrity, "integrity check");
    spdlog::error("{}; writes are refused until an admin runs verify", std::string(integrity.message()));
    Emit(out, options.json, {{"event", "writes_frozen"}, {"reason", std::string(integrity.message())}},
         absl::StrCat("WRITES FROZEN: ", integrity.message(), "; run verify once the store is repaired"));
  }
  return absl::OkStatus();
}

// Opens the principal registry and creates the first admin of a fresh store. An exit code when
// the service must not start, nullopt to go on.
std::optional<int> OpenPrincipals(const ServeOptions& options, ServiceParts* parts, std::ostream& out,
                                  std::ostream& err) {
  Env* env = options.store.env ? options.store.env : Env::Default();
  const std::filesystem::path db_path = StoreLayout(options.store_dir).database();
  auto registry = PrincipalRegistry::Open(db_path, env, options.store.keyring_path);
  if (!registry.ok()) return Fail(err, registry.status(), "principal registry");
  parts->registry = *std::move(registry);
  auto has_admin = parts->registry->HasActiveAdmin();
  if (!has_admin.ok()) return Fail(err, has_admin.status(), "principal registry");
  if (!*has_admin && parts->fresh) {
    Principal admin;
    admin.name = options.admin_name;
    admin.role = Role::kAdmin;
    admin.namespaces = {"*"};
    if (auto s = parts->registry->AddPrincipal(admin); !s.ok())
      return Fail(err, s, "creating the admin principal");
    auto key = parts->registry->CreateKey(admin.name);
    if (!key.ok()) return Fail(err, key.status(), "creating the admin key");
    Emit(out, options.json, {{"event", "admin_created"}, {"principal", admin.name}, {"api_key", *key}},
         absl::StrCat("created admin principal \"", admin.name,
                      "\"; its API key is shown once, store it now:\n    ", *key));
    *has_admin = true;
  }
  if (!*has_admin && !options.server.insecure_dev) {
    err << "error: refusing to start: the store has no active admin principal with a key.\n"
        << "  create one:  bulwark --store " << DisplayLocation(options.store_dir.string())
        << " principals add admin --role admin --namespaces '*'\n"
        << "  or, for local development only, start with --insecure-dev\n";
    return 1;
  }
  return std::nullopt;
}

// The audit log and the read path: fitted gates, the LLM, the retriever and the honeypot monitor.
absl::Status OpenReadPath(const ServeOptions& options, ServiceParts* parts) {
  Env* env = options.store.env ? options.store.env : Env::Default();
  const std::filesystem::path db_path = StoreLayout(options.store_dir).database();
  // Signed with the store's keyring (the newest key at start; a rotation takes effect at restart).
  auto audit =
      AuditLog::OpenForStore(db_path, 50, AuditLog::kDefaultQueueCapacity, options.store.keyring_path);
  if (!audit.ok()) return WithContext(audit.status(), "audit log");
  parts->audit = *std::move(audit);
  // The query history the gates can be fitted on is the store's own, fed by every search the gate
  // does not flag.
  auto gates = GateStore::Open(db_path, options.store.keyring_path);
  if (!gates.ok()) return WithContext(gates.status(), "query gates");
  parts->gates = *std::move(gates);
  parts->gate_registry = std::make_unique<GateRegistry>(parts->gates.get(), env);
  const char* llm_url = std::getenv("BULWARK_LLM_URL");
  if (!options.llm.is_null() || (llm_url != nullptr && *llm_url != '\0')) {
    auto client = ChatClient::FromConfig(options.llm.is_null() ? nlohmann::json::object() : options.llm);
    if (!client.ok()) return WithContext(client.status(), "llm");
    parts->llm = *std::move(client);
    spdlog::info("llm responder and judge: {} at {}", parts->llm->options().model,
                 parts->llm->options().endpoint.url);
  }
  parts->retriever = std::make_unique<DefendedRetriever>(parts->store.get(), parts->gate_registry.get(),
                                                         parts->llm.get(), env);
  // The honeypot monitor (MemPot): its blocks live in the store's database and survive restarts.
  auto honeypot_mode = ParseHoneypotMode(options.honeypot_mode);
  if (!honeypot_mode.ok()) return WithContext(honeypot_mode.status(), "honeypots");
  auto honeypot_repository = OpenHoneypotRepository(options.store_dir.string());
  if (!honeypot_repository.ok()) return WithContext(honeypot_repository.status(), "honeypots");
  parts->honeypot_repository = *std::move(honeypot_repository);
  HoneypotGuardOptions guard_options;
  guard_options.default_mode = *honeypot_mode;
  auto guard = HoneypotGuard::Create(guard_options, parts->store->impl().entries.get(),
                                     parts->honeypot_repository.get(), env);
  if (!guard.ok()) return WithContext(guard.status(), "honeypots");
  parts->guard = *std::move(guard);
  parts->retriever->SetHoneypotGuard(parts->guard.get());
  return absl::OkStatus();
}

// Whether the honeypot monitor observes a namespace's searches: its mode is not off and, where this
// replica holds it, it has pots. Its reads then run on the leader, which keeps the monitor's
// statistics (replica_routing.h).
std::function<bool(std::string_view)> MonitoredNamespaces(const ServiceParts& parts) {
  return [guard = parts.guard.get(), entries = parts.store->impl().entries.get()](std::string_view ns) {
    if (guard->Mode(ns) == HoneypotMode::kOff) return false;
    return !entries->Holds(ns) || entries->HasHoneypots(ns);
  };
}

// Whether a write of `ns` runs on this replica (ReplicaCoordinator::RouteWrite: it leads the
// namespace, or takes its free lease when placed first here or when `forwarded`); false before
// the coordinator is attached.
bool WritesHere(ReplicaRouting& routing, std::string_view ns, bool forwarded) {
  ReplicaCoordinator* coordinator = routing.coordinator();
  return coordinator != nullptr &&
         coordinator->RouteWrite(ns, forwarded).kind == ReplicaCoordinator::WriteRoute::Kind::kLocal;
}

// A replica's half of MemSAD's query history across replicas (query_history_forwarding.h): the
// internal route that appends other replicas' queries to the H of the namespaces led here, and,
// unless turned off, the forwarder of this replica's queries of namespaces led elsewhere.
absl::Status StartQueryForwarding(const ServeOptions& options, ServiceParts* parts,
                                  ServiceBackends* backends) {
  MemoryStore::Impl& impl = parts->store->impl();
  auto key = QueryBatchKey(impl.entries->keyring());
  if (!key.ok()) return WithContext(key.status(), "query history forwarding");
  Env* env = options.store.env ? options.store.env : Env::Default();
  ReplicaRouting* routing = parts->routing.get();
  WriteDefenses* defenses = impl.defenses.get();
  AppendQueryFn append = [defenses](std::string_view ns, std::span<const float> embedding) {
    defenses->AppendQuery(ns, embedding);
  };
  parts->query_receiver = std::make_unique<QueryHistoryReceiver>(
      *key, static_cast<size_t>(impl.embedder->dimension()),
      // As a write forwarded here: this replica leads the namespace, or takes its lease when it
      // is free (a namespace nobody has written since the group started), so the sender's
      // queries are not dropped for want of a leader.
      [routing](std::string_view ns) { return WritesHere(*routing, ns, /*forwarded=*/true); }, append, env);
  backends->add_routes = [receiver = parts->query_receiver.get()](std::vector<RouteSpec>* routes) {
    routes->push_back(receiver->Route());
  };
  if (options.replication.forward_query_history) {
    parts->query_forwarder = std::make_unique<QueryHistoryForwarder>(
        QueryForwardingOptions{}, *key, [routing] { return routing->coordinator(); }, append, env);
    defenses->SetQueryRoute(
        [forwarder = parts->query_forwarder.get()](std::string_view ns, std::span<const float> embedding) {
          return forwarder->Offer(ns, embedding);
        });
  }
  backends->extra_samples = [receiver = parts->query_receiver.get(),
                             forwarder = parts->query_forwarder.get()] {
    std::vector<Sample> samples = receiver->Samples();
    if (forwarder != nullptr) {
      for (Sample& s : forwarder->Samples()) samples.push_back(std::move(s));
    }
    return samples;
  };
  return absl::OkStatus();
}

// After the server stopped (no search runs): the forwarder sends what waits and stops.
void StopQueryForwarding(ServiceParts& parts) {
  if (parts.query_forwarder == nullptr) return;
  parts.store->impl().defenses->SetQueryRoute(nullptr);
  parts.query_forwarder->Stop();
}

// With --replica-id: joins the replica group of the PostgreSQL store (replica_coordinator.h) and
// points the routing (made before the server) at it. `url` is the listening URL.
absl::Status StartReplica(const ServeOptions& options, ServiceParts* parts, const std::string& url,
                          std::ostream& out) {
  const ReplicationFlags& flags = options.replication;
  auto* backend = dynamic_cast<PostgresBackend*>(&parts->store->impl().entries->backend());
  if (backend == nullptr)
    return absl::InvalidArgumentError("--replica-id needs a PostgreSQL store (--backend)");
  ReplicaOptions ro;
  ro.replica_id = flags.replica_id;
  ro.advertise_url = flags.advertise.empty() ? url : flags.advertise;
  ro.copies = static_cast<size_t>(std::max(flags.copies, 1));
  ro.lease_ttl = absl::Milliseconds(flags.lease_ttl_ms);
  MemoryStore::Impl& impl = parts->store->impl();
  EntryStore* entries = impl.entries.get();
  PlacementHooks hooks{
      .hold = [entries](std::string_view ns) { return entries->HoldNamespace(ns); },
      .drop = [entries](std::string_view ns) { entries->DropNamespace(ns); },
      .holds = [entries](std::string_view ns) { return entries->Holds(ns); },
      .known = [entries] { return entries->Held().known; },
      // A new leader's write gate starts from the previous leader's stored state (doc/scale-out.md).
      .on_lead =
          [impl = &impl](std::string_view ns) {
            impl->pipeline->ReloadMemories(ns);
            return impl->defenses->ReloadNamespace(ns);
          },
  };
  auto coordinator = ReplicaCoordinator::Start(
      options.store_dir.string(), ro, backend, [entries] { return entries->CatchUpNow(); }, std::move(hooks));
  if (!coordinator.ok()) return WithContext(coordinator.status(), "replication");
  parts->coordinator = *std::move(coordinator);
  parts->routing->Attach(parts->coordinator.get());
  Emit(out, options.json,
       {{"event", "replica"},
        {"replica_id", ro.replica_id},
        {"incarnation", parts->coordinator->incarnation()},
        {"advertise", ro.advertise_url},
        {"copies", ro.copies}},
       absl::StrCat("replica ", ro.replica_id, " at ", ro.advertise_url, " (", ro.copies, " copies)"));
  return absl::OkStatus();
}

// Serves until SIGINT or SIGTERM (waited for on a dedicated thread, so no work happens inside a
// signal handler), then stops the server.
absl::Status ServeUntilStopped(HttpServer& server, const StopSignalMask& mask) {
  std::atomic<bool> serving{true};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&mask.signals(), &sig);
    if (serving.load()) {
      spdlog::info("signal {}: stopping", sig);
      server.Stop();
    }
  });
  absl::Status served = server.Serve();
  serving = false;
  pthread_kill(signal_thread.native_handle(), SIGTERM);  // wakes sigwait if no signal came
  signal_thread.join();
  return served;
}

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
  const bool replicated = !options.replication.replica_id.empty();
  if (replicated && !IsPostgresLocation(options.store_dir.string())) {
    err << "error: --replica-id needs a PostgreSQL store (--backend postgresql://...)\n";
    return 2;
  }

  const StopSignalMask mask;
  std::signal(SIGPIPE, SIG_IGN);
  // Everything the service creates -- the store directory, its SQLite files and their -wal/-shm
  // companions, audit.db -- is for this user alone: 0700 directories, 0600 files (issue #18 9).
  ::umask(077);

  ServiceParts parts;
  if (absl::Status s = OpenStore(options, &parts, out); !s.ok()) return Fail(err, s);
  if (std::optional<int> code = OpenPrincipals(options, &parts, out, err)) return *code;
  if (so.insecure_dev) WarnInsecure(err, so);
  if (absl::Status s = OpenReadPath(options, &parts); !s.ok()) return Fail(err, s);

  Env* env = options.store.env ? options.store.env : Env::Default();
  ServiceBackends backends{parts.store.get(),     parts.registry.get(), parts.audit.get(), env,
                           parts.retriever.get(), parts.gates.get()};
  if (replicated) {
    parts.routing = std::make_unique<ReplicaRouting>(
        parts.store.get(),
        ReplicaRoutingOptions{.forward_timeout = absl::Milliseconds(options.replication.forward_timeout_ms),
                              .min_version_wait = absl::Milliseconds(options.replication.min_version_wait_ms),
                              .monitored = MonitoredNamespaces(parts)});
    backends.interceptor = parts.routing.get();
    if (absl::Status s = StartQueryForwarding(options, &parts, &backends); !s.ok()) return Fail(err, s);
  }
  auto server = HttpServer::Create(so, backends);
  if (!server.ok()) return Fail(err, server.status(), "server");

  // Expired entries are never returned; the sweeper erases them (and old idempotency records). A
  // replica purges only the namespaces it leads (taking the lease of those placed first here).
  ExpirySweeper::Options sweep{.interval_ms = options.expiry_sweep_ms};
  if (replicated) {
    sweep.sweeps = [routing = parts.routing.get()](std::string_view ns) {
      return WritesHere(*routing, ns, /*forwarded=*/false);
    };
  }
  ExpirySweeper sweeper(parts.store.get(), env, sweep);
  sweeper.Start();

  auto port = (*server)->Bind();
  if (!port.ok()) return Fail(err, port.status(), "listen");
  const std::string url = absl::StrCat(
      "http://", so.host.find(':') != std::string::npos ? "[" + so.host + "]" : so.host, ":", *port);
  if (replicated) {
    if (absl::Status s = StartReplica(options, &parts, url, out); !s.ok()) return Fail(err, s);
  }
  Emit(out, options.json, {{"event", "listening"}, {"host", so.host}, {"port", *port}, {"url", url}},
       absl::StrCat("listening on ", url));
  if (so.insecure_dev) spdlog::warn("--insecure-dev is active on {}", url);

  absl::Status served = ServeUntilStopped(**server, mask);
  sweeper.Stop();
  server->reset();
  StopQueryForwarding(parts);  // sends what waits to the leaders while this replica still runs
  // The write gate's query history is saved while this replica still holds its leases.
  if (auto s = parts.store->impl().defenses->FlushQueryHistory(); !s.ok())
    spdlog::warn("saving the query history: {}", s.ToString());
  parts.coordinator.reset();  // releases this replica's leases at once
  if (auto s = parts.audit->Flush(); !s.ok()) spdlog::error("audit flush: {}", s.ToString());
  if (!served.ok()) return Fail(err, served, "serve");
  Emit(out, options.json, {{"event", "stopped"}}, "stopped");
  return 0;
}

}  // namespace bulwark::server
