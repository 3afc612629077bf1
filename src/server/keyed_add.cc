// POST /v1/memories with a client-chosen `key` (upsert) or an `Idempotency-Key` header
// (issue #15 point 1; doc/api.md, "Keys and idempotency").
//
//   key            the namespace's live entry with this key is updated (by a caller who may
//                  rewrite it); without one a new entry is stored. The "no live holder" check is
//                  made in the insert's own transaction, so two concurrent upserts never store
//                  two live entries with one key: the loser updates the winner's entry.
//   Idempotency-Key
//                  (namespace, principal, key) -> the ids the first add stored, written in the same
//                  transaction as the entries and kept 24 h: a retried add stores nothing and is
//                  answered with those entries (as they are now), 201 as the first time. The same key
//                  with a different request body -> 409 conflict.
#include <absl/strings/str_cat.h>

#include "core/hex.h"
#include "core/status_macros.h"
#include "server/api_status.h"
#include "server/service.h"
#include "store/entry_keys.h"
#include "store/expiry_sweeper.h"
#include "store/memory_store_impl.h"

namespace bulwark::server {
namespace {

// Attempts of insert-or-update when the key's holder changes between them (deleted, expired).
constexpr int kMaxUpsertAttempts = 4;
constexpr size_t kMaxIdempotencyKeyBytes = 255;

absl::Status KeyedValidateIdempotencyKey(std::string_view key) {
  bool printable = !key.empty() && key.size() <= kMaxIdempotencyKeyBytes;
  for (unsigned char c : key) printable = printable && c > 0x20 && c < 0x7f;
  if (printable) return absl::OkStatus();
  return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument",
                  "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces");
}

Reply KeyedEntriesReply(const Call& call, const AddRequest& request, const std::vector<Entry>& entries,
                        int status) {
  Reply reply;
  reply.status = status;
  reply.text = AddResponseJson(entries, request.batch || entries.empty(), ReportViewFor(*call.caller));
  reply.content_type = "application/json";
  return reply;
}

// A retried add: the first add's entries as they are now.
absl::StatusOr<Reply> KeyedReplay(ServiceContext& ctx, const Call& call, const AddRequest& request,
                                  const std::string& name_space, const InsertClaim& claim,
                                  const InsertOutcome& outcome) {
  if (outcome.replay_request_hash != claim.request_hash) {
    return ApiError(absl::StatusCode::kFailedPrecondition, "conflict",
                    "this Idempotency-Key was used with a different request");
  }
  std::vector<Entry> entries;
  std::vector<std::string> ids;
  for (const std::string& id : outcome.replay_ids) {
    auto entry = ctx.backends.store->Get(name_space, id);
    if (!entry.ok()) return entry.status();  // DataLoss for a tampered row, as GET answers
    entries.push_back(*std::move(entry));
    ids.push_back(id);
  }
  RecordAudit(ctx, call, name_space, AuditOperation::kAdd, std::move(ids), "", {{"idempotent_replay", true}});
  return KeyedEntriesReply(call, request, entries, 201);
}

// The upsert of an entry that already holds the key: its text and metadata become the request's.
absl::StatusOr<Reply> KeyedUpdateHolder(ServiceContext& ctx, const Call& call, const AddRequest& request,
                                        const std::string& name_space, const Entry& holder) {
  BULWARK_RETURN_IF_ERROR(MayRewrite(*call.caller, holder));
  EntryUpdate update;
  update.text = request.entries[0].text;
  update.metadata = request.entries[0].metadata;  // with the request's key and expiry
  BULWARK_ASSIGN_OR_RETURN(
      auto updated, ctx.backends.store->Update(name_space, holder.id, update, call.caller->principal.name));
  RecordAudit(ctx, call, name_space, AuditOperation::kUpdate, {updated.id}, "",
              {{"upsert_key", *request.key}});
  return KeyedEntriesReply(call, request, {updated}, 200);
}

}  // namespace

absl::StatusOr<Reply> KeyedAdd(ServiceContext& ctx, const Call& call, AddRequest request,
                               const std::string& name_space) {
  Env* env = ctx.backends.env ? ctx.backends.env : Env::Default();
  const int64_t now = env->NowMicros();
  InsertClaim claim;
  claim.now_us = now;
  if (call.http.has_header("Idempotency-Key")) {
    claim.idempotency_key = call.http.get_header_value("Idempotency-Key");
    BULWARK_RETURN_IF_ERROR(KeyedValidateIdempotencyKey(claim.idempotency_key));
    claim.request_hash = Sha256Hex(absl::StrCat(name_space, "\n", call.http.body));
    claim.idempotency_after_us = now - kIdempotencyRetentionUs;
  }
  if (request.key) {
    if (request.batch || request.entries.size() != 1) {
      return ApiError(absl::StatusCode::kInvalidArgument, "invalid_argument", "a key names one entry");
    }
    claim.entry_key = *request.key;
  }
  MemoryStore& store = *ctx.backends.store;
  for (int attempt = 0; attempt < kMaxUpsertAttempts; ++attempt) {
    auto added =
        store.impl().pipeline->AddOnce(name_space, request.entries, call.caller->principal.name, claim);
    if (!added.ok()) return added.status();
    const InsertOutcome& outcome = added->outcome;
    if (!outcome.replay_ids.empty()) return KeyedReplay(ctx, call, request, name_space, claim, outcome);
    if (outcome.key_taken_by.empty()) {
      std::vector<std::string> ids;
      int64_t quarantined = 0;
      for (const Entry& e : added->entries) {
        ids.push_back(e.id);
        if (e.state == State::kQuarantined) ++quarantined;
      }
      ctx.metrics->Count(EventCounter::kEntriesAdded, static_cast<int64_t>(ids.size()));
      if (quarantined > 0) ctx.metrics->Count(EventCounter::kEntriesQuarantined, quarantined);
      RecordAudit(ctx, call, name_space, AuditOperation::kAdd, std::move(ids));
      return KeyedEntriesReply(call, request, added->entries, 201);
    }
    auto holder = LoadVisibleEntry(ctx, name_space, outcome.key_taken_by);
    if (absl::IsNotFound(holder.status())) continue;  // expired or gone meanwhile: insert again
    if (!holder.ok()) return holder.status();
    auto updated = KeyedUpdateHolder(ctx, call, request, name_space, *holder);
    if (absl::IsNotFound(updated.status()) || absl::IsFailedPrecondition(updated.status())) continue;
    return updated;
  }
  return ApiError(absl::StatusCode::kAborted, "conflict", "the key's entry kept changing; retry the request");
}

}  // namespace bulwark::server
