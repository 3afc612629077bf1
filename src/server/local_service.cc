// In-process service backends (see local_service.h).
#include "server/local_service.h"

#include <spdlog/spdlog.h>

#include "core/status_macros.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"
#include "store/memory_store_impl.h"

namespace bulwark::server {

absl::StatusOr<std::unique_ptr<LocalService>> LocalService::Open(const std::filesystem::path& dir,
                                                                 const StoreOptions& options,
                                                                 std::string_view honeypot_mode) {
  BULWARK_ASSIGN_OR_RETURN(HoneypotMode mode, ParseHoneypotMode(honeypot_mode));
  std::unique_ptr<LocalService> s(new LocalService());
  BULWARK_ASSIGN_OR_RETURN(s->store_, MemoryStore::Open(dir, options));
  Env* env = options.env ? options.env : Env::Default();
  // Every repository through the opener, by the store's location (a directory or a PostgreSQL URL).
  const std::filesystem::path db_path = StoreLayout(dir).database();
  BULWARK_ASSIGN_OR_RETURN(
      s->audit_, AuditLog::OpenForStore(db_path, 50, AuditLog::kDefaultQueueCapacity, options.keyring_path));
  BULWARK_ASSIGN_OR_RETURN(s->gates_, GateStore::Open(db_path, options.keyring_path));
  s->gate_registry_ = std::make_unique<GateRegistry>(s->gates_.get(), env);
  s->retriever_ = std::make_unique<DefendedRetriever>(s->store_.get(), s->gate_registry_.get(), nullptr, env);
  BULWARK_ASSIGN_OR_RETURN(s->honeypots_, OpenHoneypotRepository(dir.string()));
  HoneypotGuardOptions guard_options;
  guard_options.default_mode = mode;
  BULWARK_ASSIGN_OR_RETURN(s->guard_, HoneypotGuard::Create(guard_options, s->store_->impl().entries.get(),
                                                            s->honeypots_.get(), env));
  s->retriever_->SetHoneypotGuard(s->guard_.get());

  s->context_.backends = ServiceBackends{s->store_.get(), nullptr, s->audit_.get(), env, s->retriever_.get()};
  s->context_.metrics = &s->metrics_;
  return s;
}

LocalService::~LocalService() {
  if (audit_ != nullptr) {
    if (absl::Status s = audit_->Flush(); !s.ok()) spdlog::error("audit flush: {}", s.ToString());
  }
}

}  // namespace bulwark::server
