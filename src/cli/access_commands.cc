// `bulwark principals ...` (API principals and their keys, offline) and `bulwark audit` (which
// memories fed which answer, and the audit chain's verification). See access_commands.h.
#include "cli/access_commands.h"

#include <absl/strings/str_cat.h>

#include <charconv>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "audit/audit_chain.h"
#include "audit/audit_log.h"
#include "auth/principal_registry.h"
#include "bulwark/env.h"
#include "cli/cli_format.h"
#include "storage/store_layout.h"

namespace bulwark::cli {
namespace {

nlohmann::json PrincipalToJson(const Principal& p) {
  return {{"name", p.name},
          {"role", ToString(p.role)},
          {"namespaces", p.namespaces},
          {"revoked", p.revoked},
          {"created_at_us", p.created_at_us}};
}

std::string JoinNamespaces(const std::vector<std::string>& namespaces) {
  std::string out;
  for (const std::string& ns : namespaces) out += (out.empty() ? "" : ",") + ns;
  return out;
}

void PrintNewKey(const std::string& principal, const std::string& key, const CommandEnv& env) {
  if (env.json) {
    env.out << nlohmann::json{{"principal", principal}, {"api_key", key}}.dump() << "\n";
  } else {
    env.out << "API key for " << principal << " (shown once; store it now):\n    " << key << "\n";
  }
}

// `principals add NAME --role R --namespaces NS [--no-key]`.
int AddPrincipal(PrincipalRegistry& r, const AccessCommands::PrincipalFlags& f, const CommandEnv& env) {
  Principal p;
  p.name = f.name;
  auto role = ParseRole(f.role);
  if (!role) return FailCommand(env, absl::InvalidArgumentError("--role must be reader, writer or admin"));
  p.role = *role;
  p.namespaces = f.namespaces;
  if (p.namespaces.empty()) {
    return FailCommand(
        env, absl::InvalidArgumentError("--namespaces is required (comma-separated, or '*' for all)"));
  }
  if (auto s = r.AddPrincipal(p); !s.ok()) return FailCommand(env, s);
  if (!env.json) {
    env.out << "created principal " << p.name << " (" << ToString(p.role) << "; namespaces "
            << JoinNamespaces(p.namespaces) << ")\n";
  }
  if (f.no_key) {
    if (env.json) env.out << nlohmann::json{{"principal", p.name}}.dump() << "\n";
    return 0;
  }
  auto key = r.CreateKey(p.name);
  if (!key.ok()) return FailCommand(env, key.status());
  PrintNewKey(p.name, *key, env);
  return 0;
}

// `principals list` (every principal) and `principals keys NAME` (one principal's key ids).
int ListPrincipals(PrincipalRegistry& r, bool keys_of_one, const std::string& name, const CommandEnv& env) {
  const std::string action = keys_of_one ? "keys" : "list";
  auto principals = r.ListPrincipals();
  if (!principals.ok()) return FailCommand(env, principals.status());
  nlohmann::json out = nlohmann::json::array();
  for (const Principal& p : *principals) {
    if (action == "keys" && p.name != name) continue;
    auto keys = r.ListKeys(p.name);
    if (!keys.ok()) return FailCommand(env, keys.status());
    nlohmann::json j = PrincipalToJson(p);
    j["keys"] = nlohmann::json::array();
    for (const ApiKeyInfo& k : *keys) {
      j["keys"].push_back({{"key_id", k.key_id}, {"created_at_us", k.created_at_us}, {"revoked", k.revoked}});
    }
    out.push_back(std::move(j));
  }
  if (action == "keys" && out.empty())
    return FailCommand(env, absl::NotFoundError(absl::StrCat("no principal ", name)));
  if (env.json) {
    env.out << (action == "keys" ? nlohmann::json{{"keys", out[0]["keys"]}}
                                 : nlohmann::json{{"principals", out}})
                   .dump()
            << "\n";
    return 0;
  }
  for (const auto& p : out) {
    if (action == "keys") {
      for (const auto& k : p["keys"]) {
        env.out << k["key_id"].get<std::string>() << "  created "
                << FormatTime(k["created_at_us"].get<int64_t>())
                << (k["revoked"].get<bool>() ? "  REVOKED" : "") << "\n";
      }
      continue;
    }
    int active_keys = 0;
    for (const auto& k : p["keys"]) active_keys += k["revoked"].get<bool>() ? 0 : 1;
    env.out << std::left << std::setw(20) << p["name"].get<std::string>() << " " << std::setw(7)
            << p["role"].get<std::string>() << " namespaces "
            << JoinNamespaces(p["namespaces"].get<std::vector<std::string>>()) << "  keys " << active_keys
            << (p["revoked"].get<bool>() ? "  REVOKED" : "") << "\n";
  }
  if (out.empty()) env.out << "no principals\n";
  return 0;
}

int CmdPrincipals(const std::string& action, const AccessCommands::PrincipalFlags& f, const CommandEnv& env) {
  auto registry = OpenPrincipalRegistry(env);
  if (!registry.ok()) return FailCommand(env, registry.status());
  PrincipalRegistry& r = **registry;
  if (action == "add") return AddPrincipal(r, f, env);
  if (action == "key") {
    auto key = r.CreateKey(f.name);
    if (!key.ok()) return FailCommand(env, key.status());
    PrintNewKey(f.name, *key, env);
    return 0;
  }
  if (action == "revoke") {
    if (auto s = r.RevokePrincipal(f.name); !s.ok()) return FailCommand(env, s);
    if (env.json) {
      env.out << nlohmann::json{{"name", f.name}, {"revoked", true}}.dump() << "\n";
    } else {
      env.out << "revoked principal " << f.name << " and all its keys\n";
    }
    return 0;
  }
  if (action == "revoke-key") {
    if (auto s = r.RevokeKey(f.key_id); !s.ok()) return FailCommand(env, s);
    if (env.json) {
      env.out << nlohmann::json{{"key_id", f.key_id}, {"revoked", true}}.dump() << "\n";
    } else {
      env.out << "revoked key " << f.key_id << "\n";
    }
    return 0;
  }
  return ListPrincipals(r, action == "keys", f.name, env);
}

// "--since": microseconds since the epoch, or an age such as 90s, 30m, 2h, 7d.
absl::StatusOr<int64_t> ParseSince(const std::string& text, int64_t now_us) {
  if (text.empty()) return 0;
  int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1'000'000;
      break;
    case 'm':
      unit = 60'000'000;
      break;
    case 'h':
      unit = 3'600'000'000;
      break;
    case 'd':
      unit = 86'400'000'000;
      break;
    default:
      break;
  }
  const std::string digits = unit ? text.substr(0, text.size() - 1) : text;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size() || value < 0 ||
      (unit && value > INT64_MAX / unit)) {
    return absl::InvalidArgumentError(
        "--since must be microseconds since the epoch or an age like 30m, 2h, 7d");
  }
  return unit ? std::max<int64_t>(0, now_us - value * unit) : value;
}

// `audit --verify`: the signed chain of the whole log (audit/audit_chain.h); exit 1 if any record
// fails.
int CmdAuditVerify(AuditLog& log, const CommandEnv& env) {
  auto v = log.Verify();
  if (!v.ok()) return FailCommand(env, v.status());
  if (env.json) {
    env.out << ToJson(*v).dump() << "\n";
    return v->ok() ? 0 : 1;
  }
  env.out << "audit log: " << v->records << " records";
  if (v->unsigned_records > 0)
    env.out << " (" << v->unsigned_records << " written before records were signed)";
  env.out << (v->ok() ? "; every signed record verifies\n" : "\n");
  for (const AuditVerification::Bad& b : v->bad) env.out << "BAD seq " << b.seq << ": " << b.reason << "\n";
  if (!v->ok()) {
    env.err << "error: " << v->bad.size() << " audit record(s) fail verification\n";
    return 1;
  }
  return 0;
}

int CmdAudit(bool namespace_given, const AccessCommands::AuditFlags& f, const CommandEnv& env) {
  const std::filesystem::path db = StoreLayout(env.store).database();
  if (!StoreLayout(env.store).StoreExists()) {  // a PostgreSQL store: opening the log tells
    return FailCommand(env, absl::NotFoundError(absl::StrCat("no store in ", env.store)));
  }
  AuditQuery query;
  if (!f.principal.empty()) query.principal = f.principal;
  if (!f.session.empty()) query.session = f.session;
  if (!f.entry_id.empty()) query.entry_id = f.entry_id;
  if (namespace_given) query.name_space = env.name_space;
  auto since = ParseSince(f.since, Env::Default()->NowMicros());
  if (!since.ok()) return FailCommand(env, since.status());
  query.since_us = *since;
  query.limit = f.limit;
  auto log = AuditLog::OpenForStore(db, 50, AuditLog::kDefaultQueueCapacity, env.keyring);
  if (!log.ok()) return FailCommand(env, log.status());
  if (f.verify) return CmdAuditVerify(**log, env);
  auto records = (*log)->Query(query);
  if (!records.ok()) return FailCommand(env, records.status());
  if (env.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const AuditRecord& r : *records) out.push_back(ToJson(r));
    env.out << nlohmann::json{{"records", out}}.dump() << "\n";
    return 0;
  }
  if (records->empty()) env.out << "no audit records\n";
  for (const AuditRecord& r : *records) {
    std::string ids;
    for (const std::string& id : r.returned_ids) ids += (ids.empty() ? "" : ",") + id;
    env.out << FormatTime(r.at_us) << "  " << r.principal << "  session "
            << (r.session.empty() ? "-" : r.session) << "  " << r.name_space << "  " << r.operation;
    if (!r.query_hash.empty()) env.out << "  query " << r.query_hash.substr(0, 16);
    env.out << "  ids [" << ids << "]\n";
  }
  return 0;
}

}  // namespace

// The principal registry of an existing store (it lives in the store's database file).
absl::StatusOr<std::unique_ptr<PrincipalRegistry>> OpenPrincipalRegistry(const CommandEnv& env) {
  const std::filesystem::path db = StoreLayout(env.store).database();
  if (!StoreLayout(env.store).StoreExists()) {  // a PostgreSQL store: opening the registry tells
    return absl::NotFoundError(
        absl::StrCat("no store in ", env.store, " (run `bulwark init` or `bulwark serve` first)"));
  }
  return PrincipalRegistry::Open(db, Env::Default(), StoreLayout(env.store, env.keyring).keyring());
}

void AccessCommands::Register(CLI::App& app) {
  principals_ = app.add_subcommand("principals", "manage API principals and their keys (offline)");
  principals_->require_subcommand(1);
  auto* add = principals_->add_subcommand("add", "create a principal and print its first API key once");
  add->add_option("name", principal_.name, "1-64 characters of [A-Za-z0-9_.@:-]")->required();
  add->add_option("--role", principal_.role, "reader | writer | admin")
      ->capture_default_str()
      ->check(CLI::IsMember({"reader", "writer", "admin"}));
  add->add_option("--namespaces", principal_.namespaces,
                  "granted namespaces, comma-separated; '*' grants all")
      ->delimiter(',')
      ->required();
  add->add_flag("--no-key", principal_.no_key, "do not create a key now");
  principals_->add_subcommand("list", "list principals with their roles, grants and key counts");
  principals_->add_subcommand("revoke", "revoke a principal and all its keys")
      ->add_option("name", principal_.name)
      ->required();
  principals_->add_subcommand("key", "create another API key for a principal (printed once)")
      ->add_option("name", principal_.name)
      ->required();
  principals_->add_subcommand("keys", "list a principal's key ids")
      ->add_option("name", principal_.name)
      ->required();
  principals_->add_subcommand("revoke-key", "revoke one API key by its key id")
      ->add_option("key_id", principal_.key_id)
      ->required();

  audit_ = app.add_subcommand("audit", "read the audit log: which memories fed which answer (newest first)");
  audit_->add_option("--principal", audit_flags_.principal, "only this principal");
  audit_->add_option("--session", audit_flags_.session, "only this X-Bulwark-Session");
  audit_->add_option("--entry", audit_flags_.entry_id, "only records that returned this entry id");
  audit_->add_option("--since", audit_flags_.since, "microseconds since the epoch, or an age: 30m, 2h, 7d");
  audit_->add_option("--limit", audit_flags_.limit, "most records")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  audit_->add_flag(
      "--verify", audit_flags_.verify,
      "check the signed chain of every record (edited, forged or removed records); exit 1 if any fails");
  audit_->footer("Filter by namespace with the global -n/--namespace (all namespaces when not given).");
}

std::optional<int> AccessCommands::Run(const CommandEnv& env) {
  if (principals_->parsed()) {
    std::string action;
    for (const CLI::App* sub : principals_->get_subcommands()) action = sub->get_name();
    return CmdPrincipals(action, principal_, env);
  }
  if (audit_->parsed()) return CmdAudit(env.namespace_given, audit_flags_, env);
  return std::nullopt;
}

}  // namespace bulwark::cli
