// libFuzzer target for the HTTP request decoders (src/server/request_parsing.h). Every input is fed
// to every body decoder and, split at '&' and '=', to the query-string decoders. No input may
// crash, hang, leak or trip ASan/UBSan; each must either decode into a value that respects the
// limits or be refused with InvalidArgument -- anything else aborts.
//
//   scripts/fuzz [SECONDS]      builds build-fuzz/ with clang and runs this target
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/request_parsing.h"

namespace {

using bulwark::server::RequestLimits;

template <typename T>
bool Refused(const absl::StatusOr<T>& result) {
  if (result.ok()) return false;
  if (result.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
  return true;
}

void CheckStatus(const absl::Status& status) {
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument) std::abort();
}

// The read-defense fields respect the limits: k_high and m up to max_k, 1 <= k <= m, nruns up to
// max_smoothing_runs, a known responder.
void CheckDefenses(const bulwark::server::ReadDefenseFields& d, const RequestLimits& limits) {
  if (d.k_high < 0 || d.k_high > limits.max_k) std::abort();
  if (d.responder != bulwark::ResponderKind::kExtractive && d.responder != bulwark::ResponderKind::kLlm)
    std::abort();
  if (d.smoothing) {
    const bulwark::SmoothingOptions& s = *d.smoothing;
    if (s.m < 1 || s.m > limits.max_k || s.k < 1 || s.k > s.m) std::abort();
    if (s.nruns < 1 || s.nruns > limits.max_smoothing_runs) std::abort();
  }
}

bulwark::server::QueryParams SplitQuery(std::string_view text) {
  bulwark::server::QueryParams params;
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    size_t eq = pair.find('=');
    params.emplace(std::string(pair.substr(0, eq)),
                   eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
    if (amp == std::string_view::npos) break;
    text.remove_prefix(amp + 1);
  }
  return params;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  RequestLimits limits;
  limits.max_batch_entries = 8;  // small, so the fuzzer can reach the limit

  if (auto object = bulwark::server::ParseJsonObject(body, limits.max_depth); !Refused(object)) {
    if (!object->is_object()) std::abort();
  }
  if (auto add = bulwark::server::ParseAddRequest(body, limits); !Refused(add)) {
    if (add->entries.empty() || add->entries.size() > limits.max_batch_entries) std::abort();
    if (!add->batch && add->entries.size() != 1) std::abort();
    for (const auto& e : add->entries) {
      if (!e.metadata.is_object()) std::abort();
    }
  }
  if (auto search = bulwark::server::ParseSearchRequest(body, limits); !Refused(search)) {
    if (search->options.k < 1 || search->options.k > limits.max_k) std::abort();
    if (!search->options.metadata_filter.is_object()) std::abort();
    CheckDefenses(search->defenses, limits);
  }
  if (auto answer = bulwark::server::ParseAnswerRequest(body, limits); !Refused(answer)) {
    if (!answer->defenses.smoothing || !answer->filter.is_object()) std::abort();
    CheckDefenses(answer->defenses, limits);
  }
  if (auto update = bulwark::server::ParseUpdateRequest(body, limits); !Refused(update)) {
    if (!update->update.text && !update->update.metadata) std::abort();
  }
  (void)Refused(bulwark::server::ParseEntryActionRequest(body, /*allow_reason=*/true, limits));
  (void)Refused(bulwark::server::ParseEntryActionRequest(body, /*allow_reason=*/false, limits));
  if (auto principal = bulwark::server::ParseCreatePrincipalRequest(body, limits); !Refused(principal)) {
    if (principal->principal.namespaces.empty()) std::abort();
  }

  const bulwark::server::QueryParams params = SplitQuery(body);
  if (auto audit = bulwark::server::ParseAuditQuery(params, limits); !Refused(audit)) {
    if (audit->limit < 1 || audit->limit > limits.max_list_limit || audit->since_us < 0) std::abort();
  }
  if (auto ns = bulwark::server::ResolveNamespace(std::nullopt, params); !Refused(ns)) {
    if (ns->empty() || ns->size() > 64) std::abort();
  }
  CheckStatus(bulwark::server::CheckQueryParams(params, {"namespace", "limit"}));
  CheckStatus(bulwark::server::ValidateSessionId(body));
  return 0;
}
