// The honeypot session monitor's commands of `bulwark` (issue #13 point 3; honeypot_commands.h
// registers them): `honeypots mode` stores the namespace's signed monitor setting, `sessions list`
// shows the stored blocks and `sessions unblock` clears one. Each change appends an admin-only
// audit record (principal "bulwark:cli", detail as the HTTP routes' records plus "via": "cli"),
// written before the command reports success; a store whose audit log cannot be opened is not
// changed.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command_env.h"
#include "storage/honeypot_repository.h"
#include "store/memory_store.h"

namespace bulwark::cli {

// The store and its honeypot repository, opened together (every `honeypots` and `sessions`
// subcommand).
struct HoneypotStore {
  std::unique_ptr<MemoryStore> store;
  std::unique_ptr<HoneypotRepository> repo;
};
[[nodiscard]] absl::StatusOr<HoneypotStore> OpenHoneypotStore(const CommandEnv& env);

// `sessions list` (unblock false) or `sessions unblock --principal P [--session S]`. Returns the
// exit code (0, or 1 with the message on env.err).
int RunHoneypotSessions(const CommandEnv& env, bool unblock, const std::string& principal,
                        const std::string& session);
// `honeypots mode MODE [...]`: `given` holds the fields named on the command line; the others keep
// their stored values. Returns the exit code.
int RunHoneypotMode(const CommandEnv& env, const nlohmann::json& given);

}  // namespace bulwark::cli
