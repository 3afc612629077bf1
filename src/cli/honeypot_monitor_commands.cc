// `bulwark honeypots mode` and `bulwark sessions list|unblock` (see honeypot_monitor_commands.h).
#include "cli/honeypot_monitor_commands.h"

#include <absl/strings/str_cat.h>

#include <memory>
#include <string>

#include "audit/audit_log.h"
#include "audit/audit_operation.h"
#include "core/status_macros.h"
#include "retrieval/honeypot_guard.h"
#include "storage/storage_opener.h"
#include "storage/store_layout.h"
#include "store/memory_store.h"
#include "store/memory_store_impl.h"

namespace bulwark::cli {

absl::StatusOr<HoneypotStore> OpenHoneypotStore(const CommandEnv& env) {
  HoneypotStore o;
  BULWARK_ASSIGN_OR_RETURN(o.store, MemoryStore::Open(env.store, env.store_options));
  BULWARK_ASSIGN_OR_RETURN(o.repo, OpenHoneypotRepository(o.store->impl().layout.dir().string()));
  return o;
}

namespace {

// The principal of the audit records of changes made through this CLI (the HTTP routes record
// their caller).
constexpr char kCliPrincipal[] = "bulwark:cli";

// The audit log of the store, opened before a change so that a store whose log cannot be opened
// is not changed unaudited.
absl::StatusOr<std::unique_ptr<AuditLog>> OpenAudit(const CommandEnv& env) {
  return AuditLog::OpenForStore(StoreLayout(env.store).database(), 50, AuditLog::kDefaultQueueCapacity,
                                env.keyring);
}

// Appends the admin-only audit record of a change made here (as the HTTP routes' RecordAudit
// does for theirs, by principal kCliPrincipal) and writes it. The log's error if it is not written
// (the change stands).
absl::Status AuditChange(AuditLog& log, MemoryStore& store, std::string_view ns, AuditOperation operation,
                         nlohmann::json detail) {
  AuditRecord record;
  record.at_us = store.impl().env->NowMicros();
  record.principal = kCliPrincipal;
  record.name_space = std::string(ns);
  record.operation = std::string(ToString(operation));
  record.detail = std::move(detail);
  record.detail["via"] = "cli";
  log.Append(std::move(record));
  if (auto s = log.Flush(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("done, but its audit record was not written: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

// `sessions list|unblock` over the stored blocks. A running server keeps its own copy of the
// monitor: it sees an unblock made here within its refresh interval (a second).
int RunHoneypotSessions(const CommandEnv& env, bool unblock, const std::string& principal,
                        const std::string& session) {
  auto opened = OpenHoneypotStore(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto guard = HoneypotGuard::Create({}, opened->store->impl().entries.get(), opened->repo.get(), nullptr);
  if (!guard.ok()) return FailCommand(env, guard.status());
  if (unblock) {
    auto audit = OpenAudit(env);
    if (!audit.ok()) return FailCommand(env, audit.status());
    if (auto s = (*guard)->Unblock(env.name_space, principal, session); !s.ok()) return FailCommand(env, s);
    if (auto s = AuditChange(**audit, *opened->store, env.name_space, AuditOperation::kUnblockSession,
                             {{"unblocked_principal", principal}, {"unblocked_session", session}});
        !s.ok()) {
      return FailCommand(env, s);
    }
    env.out << (env.json ? nlohmann::json{{"unblocked", true}}.dump() : std::string("unblocked")) << "\n";
    return 0;
  }
  auto blocked = (*guard)->Blocked(env.name_space);
  if (!blocked.ok()) return FailCommand(env, blocked.status());
  nlohmann::json out = nlohmann::json::array();
  for (const BlockedKey& b : *blocked) {
    out.push_back({{"namespace", b.name_space},
                   {"principal", b.principal},
                   {"session", b.session},
                   {"rounds", b.state.sprt.rounds},
                   {"pot_hits", b.state.pot_hits},
                   {"decided_at_us", b.state.decided_at_us}});
    if (!env.json) {
      env.out << b.name_space << "  " << b.principal << "  "
              << (b.session.empty() ? "(principal)" : b.session) << "  after " << b.state.sprt.decided_round
              << " searches, " << b.state.pot_hits << " pot hits\n";
    }
  }
  if (env.json) env.out << out.dump() << "\n";
  return 0;
}

// `honeypots mode MODE [--k-obs N] [--estimator E] [--calibration-cap C] [--h0 P] [--alpha A]
// [--beta B]`: the namespace's signed monitor setting (fields not given keep their stored values).
int RunHoneypotMode(const CommandEnv& env, const nlohmann::json& given) {
  auto opened = OpenHoneypotStore(env);
  if (!opened.ok()) return FailCommand(env, opened.status());
  auto guard = HoneypotGuard::Create({}, opened->store->impl().entries.get(), opened->repo.get(), nullptr);
  if (!guard.ok()) return FailCommand(env, guard.status());
  const GuardSetting before = (*guard)->Setting(env.name_space);
  auto setting = GuardSetting::FromJson(given, before);
  if (!setting.ok()) return FailCommand(env, setting.status());
  auto audit = OpenAudit(env);
  if (!audit.ok()) return FailCommand(env, audit.status());
  if (auto s = (*guard)->PutSetting(env.name_space, *setting); !s.ok()) return FailCommand(env, s);
  if (auto s = AuditChange(**audit, *opened->store, env.name_space, AuditOperation::kHoneypotSetting,
                           {{"before", before.ToJson()}, {"after", setting->ToJson()}});
      !s.ok()) {
    return FailCommand(env, s);
  }
  nlohmann::json out = setting->ToJson();
  out["namespace"] = env.name_space;
  if (env.json) {
    env.out << out.dump() << "\n";
  } else {
    env.out << "honeypot monitor of " << env.name_space << ": " << ToString(setting->mode) << ", k_obs "
            << setting->k_obs << ", estimator " << honeypot::ToString(setting->estimator) << ", h0 "
            << honeypot::ToString(setting->h0) << ", alpha " << setting->alpha << ", beta " << setting->beta
            << ", intent " << (setting->intent ? "on" : "off")
            << " (a running server applies it within a second)\n";
  }
  return 0;
}

}  // namespace bulwark::cli
