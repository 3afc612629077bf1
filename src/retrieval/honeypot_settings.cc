// The honeypot monitor's signed per-namespace settings (see honeypot_settings.h).
#include "retrieval/honeypot_settings.h"

#include <absl/strings/str_cat.h>

#include <cmath>

#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/signer.h"
#include "storage/storage_backend.h"

namespace bulwark {
namespace {

constexpr std::string_view kMetaPrefix = "honeypot_setting/";
constexpr std::string_view kDomain = "bulwark.honeypot_setting.v1";
constexpr double kMaxCalibrationCap = 20;

std::string MetaKey(std::string_view name_space) {
  return absl::StrCat(ToAbsl(kMetaPrefix), ToAbsl(name_space));
}

std::string SettingEncoding(std::string_view name_space, std::string_view setting_json, uint32_t key_id) {
  std::string out(kDomain);
  AppendEncodingField(&out, absl::StrCat(key_id));
  AppendEncodingField(&out, name_space);
  AppendEncodingField(&out, setting_json);
  return out;
}

absl::Status Bad(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("honeypot setting ", ToAbsl(field), ": ", ToAbsl(why)));
}

// Reads a finite number field of `j` into `out` if present.
absl::Status ReadNumber(const nlohmann::json& j, const char* field, double* out) {
  auto it = j.find(field);
  if (it == j.end()) return absl::OkStatus();
  if (!it->is_number() || !std::isfinite(it->get<double>())) return Bad(field, "must be a number");
  *out = it->get<double>();
  return absl::OkStatus();
}

// Reads a string field of `j` and parses it with `parse` into `out` if present.
template <typename T, typename Parse>
absl::Status ReadName(const nlohmann::json& j, const char* field, Parse parse, T* out) {
  auto it = j.find(field);
  if (it == j.end()) return absl::OkStatus();
  if (!it->is_string()) return Bad(field, "must be a string");
  absl::StatusOr<T> parsed = parse(it->template get<std::string>());
  if (!parsed.ok()) return Bad(field, ToStd(parsed.status().message()));
  *out = *parsed;
  return absl::OkStatus();
}

}  // namespace

std::string_view ToString(HoneypotMode mode) {
  switch (mode) {
    case HoneypotMode::kOff:
      return "off";
    case HoneypotMode::kMonitor:
      return "monitor";
    case HoneypotMode::kBlock:
      return "block";
  }
  return "?";
}

absl::StatusOr<HoneypotMode> ParseHoneypotMode(std::string_view name) {
  if (name == "off") return HoneypotMode::kOff;
  if (name == "monitor") return HoneypotMode::kMonitor;
  if (name == "block") return HoneypotMode::kBlock;
  return absl::InvalidArgumentError(
      absl::StrCat("honeypot mode must be off, monitor or block, not \"", ToAbsl(name), "\""));
}

nlohmann::json GuardSetting::ToJson() const {
  return {{"mode", ToString(mode)},
          {"k_obs", k_obs},
          {"estimator", honeypot::ToString(estimator)},
          {"calibration_cap", calibration_cap},
          {"h0", honeypot::ToString(h0)},
          {"alpha", alpha},
          {"beta", beta},
          {"intent", intent}};
}

absl::Status GuardSetting::Validate() const {
  if (k_obs < 1 || k_obs > 64) return Bad("k_obs", "must be between 1 and 64");
  if (estimator == honeypot::LlrEstimatorKind::kGlobalSimilarity) {
    return Bad("estimator",
               "global_similarity needs the store's best pot and memory cosines, which the read "
               "path does not compute (count | similarity | count_calibrated)");
  }
  if (!(calibration_cap >= 0 && calibration_cap < kMaxCalibrationCap))
    return Bad("calibration_cap", "must be in [0, 20)");
  if (h0 == honeypot::LowerBoundary::kNone)
    return Bad("h0", "none lets a long benign prefix hide an attack (restart | floor | cusum)");
  return honeypot::Sprt::Create({alpha, beta, h0}).status();
}

absl::StatusOr<GuardSetting> GuardSetting::FromJson(const nlohmann::json& j, const GuardSetting& base) {
  if (!j.is_object()) return absl::InvalidArgumentError("a honeypot setting is a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "mode" && key != "k_obs" && key != "estimator" && key != "calibration_cap" && key != "h0" &&
        key != "alpha" && key != "beta" && key != "intent") {
      return Bad(key, "unknown field");
    }
  }
  GuardSetting s = base;
  BULWARK_RETURN_IF_ERROR(ReadName(j, "mode", ParseHoneypotMode, &s.mode));
  BULWARK_RETURN_IF_ERROR(ReadName(j, "estimator", honeypot::ParseLlrEstimatorKind, &s.estimator));
  BULWARK_RETURN_IF_ERROR(ReadName(j, "h0", honeypot::ParseLowerBoundary, &s.h0));
  if (auto it = j.find("k_obs"); it != j.end()) {
    if (!it->is_number_integer()) return Bad("k_obs", "must be an integer");
    const int64_t k = it->get<int64_t>();
    if (k < 1 || k > 64) return Bad("k_obs", "must be between 1 and 64");
    s.k_obs = static_cast<int>(k);
  }
  BULWARK_RETURN_IF_ERROR(ReadNumber(j, "calibration_cap", &s.calibration_cap));
  BULWARK_RETURN_IF_ERROR(ReadNumber(j, "alpha", &s.alpha));
  BULWARK_RETURN_IF_ERROR(ReadNumber(j, "beta", &s.beta));
  if (auto it = j.find("intent"); it != j.end()) {
    if (!it->is_boolean()) return Bad("intent", "must be true or false");
    s.intent = it->get<bool>();
  }
  BULWARK_RETURN_IF_ERROR(s.Validate());
  return s;
}

GuardSettingStore::GuardSettingStore(StorageBackend* backend, const Keyring* keyring)
    : backend_(backend), signer_(std::make_unique<Signer>(keyring)) {}

GuardSettingStore::~GuardSettingStore() = default;

std::string GuardSettingStore::Encode(std::string_view name_space, const GuardSetting& setting) const {
  const nlohmann::json json = setting.ToJson();
  const std::string text = json.dump();
  auto [key_id, tag] = signer_->NewestTag([&](uint32_t id) { return SettingEncoding(name_space, text, id); });
  return nlohmann::json{{"setting", json}, {"key_id", key_id}, {"tag", HexEncode(tag)}}.dump();
}

absl::StatusOr<GuardSetting> GuardSettingStore::Decode(std::string_view name_space,
                                                       std::string_view value) const {
  auto bad = [&](std::string_view why) {
    return absl::DataLossError(
        absl::StrCat("stored honeypot setting of namespace ", ToAbsl(name_space), ": ", ToAbsl(why)));
  };
  const nlohmann::json json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return bad("not signed");
  auto setting = json.find("setting");
  auto key_id = json.find("key_id");
  auto tag = json.find("tag");
  if (setting == json.end() || !setting->is_object() || key_id == json.end() ||
      !key_id->is_number_unsigned() || key_id->get<uint64_t>() > UINT32_MAX || tag == json.end() ||
      !tag->is_string()) {
    return bad("does not decode");
  }
  const std::optional<std::string> tag_bytes = HexDecode(tag->get<std::string>());
  if (!tag_bytes) return bad("does not decode");
  const std::string text = setting->dump();
  if (absl::Status s =
          signer_->CheckTag([] { return std::string("tag"); }, static_cast<uint32_t>(key_id->get<uint64_t>()),
                            *tag_bytes, [&](uint32_t id) { return SettingEncoding(name_space, text, id); });
      !s.ok()) {
    return bad(ToStd(s.message()));
  }
  absl::StatusOr<GuardSetting> parsed = GuardSetting::FromJson(*setting, GuardSetting());
  if (!parsed.ok()) return bad(ToStd(parsed.status().message()));
  return *parsed;
}

absl::Status GuardSettingStore::Put(std::string_view name_space, const GuardSetting& setting) {
  BULWARK_RETURN_IF_ERROR(ValidateNamespace(name_space));
  BULWARK_RETURN_IF_ERROR(setting.Validate());
  return backend_->PutMeta(MetaKey(name_space), Encode(name_space, setting));
}

absl::Status GuardSettingStore::Scan(
    const std::function<absl::Status(std::string_view, const absl::StatusOr<GuardSetting>&)>& visit) const {
  return backend_->ScanMeta(kMetaPrefix, [&](std::string_view key, std::string_view value) {
    const std::string_view name_space = key.substr(kMetaPrefix.size());
    return visit(name_space, Decode(name_space, value));
  });
}

}  // namespace bulwark
