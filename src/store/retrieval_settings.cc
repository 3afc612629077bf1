// Per-namespace retrieval settings in the store's metadata table (see retrieval_settings.h).
#include "store/retrieval_settings.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/signer.h"

namespace bulwark {
namespace {

constexpr char kMetaPrefix[] = "retrieval/";
constexpr std::string_view kRetrievalDomain = "bulwark.retrieval.v1";
// The meta mark of settings written before they were signed (storage/sqlite/sqlite_schema.h).
constexpr char kUnsignedMarker[] = "unsigned_retrieval_settings";

std::string MetaKey(std::string_view name_space) { return absl::StrCat(kMetaPrefix, ToAbsl(name_space)); }

std::string SettingEncoding(std::string_view name_space, std::string_view retrieval, uint32_t key_id) {
  std::string out(kRetrievalDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, name_space);
  AppendEncodingField(&out, retrieval);
  return out;
}

}  // namespace

RetrievalSettings::RetrievalSettings(StorageBackend* backend, const Keyring* keyring,
                                     Retrieval default_retrieval, int refresh_ms, Env* env)
    : backend_(backend),
      signer_(std::make_unique<Signer>(keyring)),
      default_(default_retrieval),
      refresh_ms_(refresh_ms),
      env_(env) {}

RetrievalSettings::~RetrievalSettings() = default;

std::string RetrievalSettings::Encode(std::string_view name_space, Retrieval retrieval) const {
  const std::string value(ToString(retrieval));
  auto [key_id, tag] =
      signer_->NewestTag([&](uint32_t id) { return SettingEncoding(name_space, value, id); });
  return nlohmann::json{{"retrieval", value}, {"key_id", key_id}, {"tag", HexEncode(tag)}}.dump();
}

absl::StatusOr<Retrieval> RetrievalSettings::Decode(std::string_view name_space,
                                                    std::string_view value) const {
  auto bad = [&](std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("stored retrieval setting of namespace ", ToAbsl(name_space), ": ", ToAbsl(why)));
  };
  const nlohmann::json json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return bad("not signed");
  auto retrieval = json.find("retrieval");
  auto key_id = json.find("key_id");
  auto tag = json.find("tag");
  if (retrieval == json.end() || !retrieval->is_string() || key_id == json.end() ||
      !key_id->is_number_unsigned() || key_id->get<uint64_t>() > UINT32_MAX || tag == json.end() ||
      !tag->is_string()) {
    return bad("does not decode");
  }
  const std::string text = retrieval->get<std::string>();
  const std::optional<std::string> tag_bytes = HexDecode(tag->get<std::string>());
  if (!tag_bytes) return bad("does not decode");
  if (absl::Status s =
          signer_->CheckTag([] { return std::string("tag"); }, static_cast<uint32_t>(key_id->get<uint64_t>()),
                            *tag_bytes, [&](uint32_t id) { return SettingEncoding(name_space, text, id); });
      !s.ok()) {
    return bad(ToStd(s.message()));
  }
  auto parsed = ParseRetrieval(text);
  if (!parsed.ok()) return bad(ToStd(parsed.status().message()));
  return *parsed;
}

absl::StatusOr<int64_t> RetrievalSettings::SignSettingsFromBeforeSigning() {
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> marked, backend_->GetMeta(kUnsignedMarker));
  if (!marked) return 0;
  std::vector<std::pair<std::string, Retrieval>> plain;
  BULWARK_RETURN_IF_ERROR(backend_->ScanMeta(kMetaPrefix, [&](std::string_view key, std::string_view value) {
    auto parsed = ParseRetrieval(value);  // a value from before signing: the bare name
    if (parsed.ok())
      plain.emplace_back(std::string(key.substr(std::string_view(kMetaPrefix).size())), *parsed);
    return absl::OkStatus();
  }));
  for (const auto& [name_space, retrieval] : plain) {
    BULWARK_RETURN_IF_ERROR(backend_->PutMeta(MetaKey(name_space), Encode(name_space, retrieval)));
  }
  BULWARK_RETURN_IF_ERROR(backend_->DeleteMeta(kUnsignedMarker));
  return static_cast<int64_t>(plain.size());
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> RetrievalSettings::Verify() {
  std::vector<std::pair<std::string, std::string>> problems;
  BULWARK_RETURN_IF_ERROR(backend_->ScanMeta(kMetaPrefix, [&](std::string_view key, std::string_view value) {
    const std::string_view name_space = key.substr(std::string_view(kMetaPrefix).size());
    if (absl::Status s = Decode(name_space, value).status(); !s.ok()) {
      problems.emplace_back(std::string(name_space), std::string(s.message()));
    }
    return absl::OkStatus();
  }));
  return problems;
}

absl::StatusOr<std::optional<Retrieval>> RetrievalSettings::Stored(std::string_view name_space) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  BULWARK_ASSIGN_OR_RETURN(const std::optional<std::string> value, backend_->GetMeta(MetaKey(name_space)));
  if (!value) return std::optional<Retrieval>();
  BULWARK_ASSIGN_OR_RETURN(const Retrieval retrieval, Decode(name_space, *value));
  return std::optional<Retrieval>(retrieval);
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
  BULWARK_RETURN_IF_ERROR(backend_->PutMeta(MetaKey(name_space), Encode(name_space, retrieval)));
  absl::MutexLock lock(&mu_);
  cache_[ToAbsl(name_space)] = {retrieval, env_->NowMicros()};
  return absl::OkStatus();
}

}  // namespace bulwark
