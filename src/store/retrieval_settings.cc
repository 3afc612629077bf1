// Per-namespace retrieval settings in the store's metadata table (see retrieval_settings.h).
#include "store/retrieval_settings.h"

#include <absl/strings/str_cat.h>

#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"

namespace bulwark {
namespace {

std::string MetaKey(std::string_view name_space) { return absl::StrCat("retrieval/", ToAbsl(name_space)); }

}  // namespace

absl::StatusOr<std::optional<Retrieval>> RetrievalSettings::Stored(std::string_view name_space) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> value, backend_->GetMeta(MetaKey(name_space)));
  if (!value) return std::optional<Retrieval>();
  auto parsed = ParseRetrieval(*value);
  if (!parsed.ok()) {
    return absl::DataLossError(absl::StrCat("stored retrieval setting of namespace ", ToAbsl(name_space),
                                            ": ", parsed.status().message()));
  }
  return std::optional<Retrieval>(*parsed);
}

absl::StatusOr<Retrieval> RetrievalSettings::Get(std::string_view name_space) {
  const int64_t now = env_->NowMicros();
  {
    absl::MutexLock lock(&mu_);
    const auto it = cache_.find(ToAbsl(name_space));
    if (it != cache_.end() &&
        (refresh_ms_ < 0 || now - it->second.read_at_us < int64_t{refresh_ms_} * 1000)) {
      return it->second.retrieval;
    }
  }
  BULWARK_ASSIGN_OR_RETURN(const std::optional<Retrieval> stored, Stored(name_space));
  const Retrieval retrieval = stored.value_or(default_);
  absl::MutexLock lock(&mu_);
  cache_[ToAbsl(name_space)] = {retrieval, now};
  return retrieval;
}

absl::Status RetrievalSettings::Set(std::string_view name_space, Retrieval retrieval) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  BULWARK_RETURN_IF_ERROR(backend_->PutMeta(MetaKey(name_space), ToString(retrieval)));
  absl::MutexLock lock(&mu_);
  cache_[ToAbsl(name_space)] = {retrieval, env_->NowMicros()};
  return absl::OkStatus();
}

}  // namespace bulwark
