// LocalService: the service's backends opened in-process on one store directory, the way
// `bulwark serve` opens them (store, audit log, fitted query gates, the honeypot monitor and the
// defended read path), for callers that serve requests without an HTTP listener: `bulwark mcp
// --store DIR` (stdio). Several processes may open the same store at once: the store's writes are
// compare-and-set transactions and the audit chain continues from the file (audit_log.h).
//
// No LLM is configured: searches use the extractive responder and embedding equivalence.
#pragma once

#include <absl/status/statusor.h>

#include <filesystem>
#include <memory>
#include <string>

#include "audit/audit_log.h"
#include "bulwark/memory_store.h"
#include "gate/gate_registry.h"
#include "retrieval/defended_retriever.h"
#include "retrieval/honeypot_guard.h"
#include "server/metrics.h"
#include "server/service.h"
#include "storage/sqlite/sqlite_honeypot_repository.h"

namespace bulwark::server {

class LocalService {
 public:
  // Opens an existing store. NotFound if `dir` holds no store; other errors from the store, the
  // audit log, the gates or the honeypot repository; InvalidArgument for an unknown honeypot mode
  // (off | monitor | block).
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<LocalService>> Open(const std::filesystem::path& dir,
                                                                          const StoreOptions& options,
                                                                          std::string_view honeypot_mode);
  ~LocalService();

  ServiceContext& context() { return context_; }
  MemoryStore& store() { return *store_; }
  AuditLog& audit() { return *audit_; }

 private:
  LocalService() = default;

  std::unique_ptr<MemoryStore> store_;
  std::unique_ptr<AuditLog> audit_;
  std::unique_ptr<GateStore> gates_;
  std::unique_ptr<GateRegistry> gate_registry_;
  std::unique_ptr<SqliteHoneypotRepository> honeypots_;
  std::unique_ptr<HoneypotGuard> guard_;
  std::unique_ptr<DefendedRetriever> retriever_;
  Metrics metrics_;
  ServiceContext context_;
};

}  // namespace bulwark::server
