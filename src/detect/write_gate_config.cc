#include "detect/write_gate_config.h"

#include <absl/strings/str_cat.h>

#include <cmath>

namespace bulwark {
namespace {

// Strict reader: every key of `object` must be one the caller asks for.
class Reader {
 public:
  Reader(const nlohmann::json& object, std::string path) : object_(object), path_(std::move(path)) {}

  template <typename T>
  absl::Status Get(const char* key, T* out) {
    seen_.push_back(key);
    auto it = object_.find(key);
    if (it == object_.end()) return absl::OkStatus();
    try {
      *out = it->get<T>();
    } catch (const nlohmann::json::exception&) {
      return absl::InvalidArgumentError(absl::StrCat("gate config: ", path_, key, " has the wrong type"));
    }
    return absl::OkStatus();
  }
  absl::Status Object(const char* key, const std::function<absl::Status(Reader&)>& fn) {
    seen_.push_back(key);
    auto it = object_.find(key);
    if (it == object_.end()) return absl::OkStatus();
    if (!it->is_object())
      return absl::InvalidArgumentError(absl::StrCat("gate config: ", path_, key, " must be an object"));
    Reader nested(*it, absl::StrCat(path_, key, "."));
    if (auto s = fn(nested); !s.ok()) return s;
    return nested.Finish();
  }
  absl::Status Finish() const {
    for (const auto& [key, value] : object_.items()) {
      if (std::find(seen_.begin(), seen_.end(), key) == seen_.end()) {
        return absl::InvalidArgumentError(absl::StrCat("gate config: unknown field ", path_, key));
      }
    }
    return absl::OkStatus();
  }

 private:
  const nlohmann::json& object_;
  std::string path_;
  std::vector<std::string> seen_;
};

absl::Status Check(bool ok, const char* what) {
  return ok ? absl::OkStatus() : absl::InvalidArgumentError(absl::StrCat("gate config: ", what));
}

}  // namespace

const std::vector<std::string>& WriteGateConfig::DefaultProbes() {
  static const std::vector<std::string> probes = {
      // schedule and calendar
      "what is on my calendar this week",
      "when is my next meeting",
      // tasks and reminders
      "what do I need to do today",
      "remind me about my pending tasks",
      // preferences
      "what are my preferences",
      "what do I like and dislike",
      // people and contacts
      "who should I contact about this",
      "what do you know about my colleagues",
      // documents and files
      "where is the document I need",
      "find the file we discussed",
      // accounts and configuration
      "what are my account settings",
      "how is my system configured",
      // facts and knowledge
      "what should I know about this topic",
      "tell me the important facts",
      // past conversations
      "what did we talk about last time",
      "summarize our previous conversations",
  };
  return probes;
}

absl::StatusOr<WriteGateConfig> WriteGateConfig::FromJson(const nlohmann::json& json) {
  WriteGateConfig c;
  if (json.is_null()) return c;
  if (!json.is_object()) return absl::InvalidArgumentError("gate config must be a JSON object");
  Reader root(json, "");
  std::string mode = std::string(ToString(c.memsad.mode));
  auto status = root.Object("memsad", [&](Reader& r) -> absl::Status {
    for (auto s : {r.Get("enabled", &c.memsad.enabled), r.Get("history_capacity", &c.memsad.history_capacity),
                   r.Get("mode", &mode), r.Get("kappa", &c.memsad.kappa), r.Get("delta", &c.memsad.delta),
                   r.Get("uncalibrated_max_threshold", &c.memsad.uncalibrated_max_threshold),
                   r.Get("recalibrate_every", &c.memsad.recalibrate_every),
                   r.Get("recalibrate_window", &c.memsad.recalibrate_window)}) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  auto parsed_mode = ParseMemsadMode(mode);
  if (!parsed_mode.ok()) return parsed_mode.status();
  c.memsad.mode = *parsed_mode;
  status = root.Object("memsad_plus", [&](Reader& r) { return r.Get("enabled", &c.memsad_plus.enabled); });
  if (!status.ok()) return status;
  std::string watermark_scheme = std::string(ToString(c.watermark.scheme));
  status = root.Object("watermark", [&](Reader& r) -> absl::Status {
    for (auto s : {r.Get("enabled", &c.watermark.enabled), r.Get("scheme", &watermark_scheme),
                   r.Get("gamma", &c.watermark.gamma), r.Get("z_threshold", &c.watermark.z_threshold)}) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  auto parsed_scheme = ParseWatermarkKind(watermark_scheme);
  if (!parsed_scheme.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("gate config: watermark.scheme must be \"lexical\" or \"character\", not \"",
                     watermark_scheme, "\""));
  }
  c.watermark.scheme = *parsed_scheme;
  status = root.Object("validation", [&](Reader& r) -> absl::Status {
    if (auto s = r.Get("enabled", &c.validation.enabled); !s.ok()) return s;
    return r.Get("rules_file", &c.validation.rules_file);
  });
  if (!status.ok()) return status;
  status = root.Object("proactive", [&](Reader& r) -> absl::Status {
    for (auto s : {r.Get("enabled", &c.proactive.enabled), r.Get("probes", &c.proactive.probes),
                   r.Get("uncalibrated_tau", &c.proactive.uncalibrated_tau)}) {
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  if (auto s = root.Get("target_fpr", &c.target_fpr); !s.ok()) return s;
  if (auto s = root.Finish(); !s.ok()) return s;

  for (auto s :
       {Check(c.memsad.history_capacity >= 1 && c.memsad.history_capacity <= 100'000,
              "memsad.history_capacity must be 1 to 100000"),
        Check(c.memsad.kappa > 0, "memsad.kappa must be positive"),
        Check(c.memsad.delta > 0 && c.memsad.delta < 1, "memsad.delta must be in (0, 1)"),
        Check(c.memsad.recalibrate_window >= 2, "memsad.recalibrate_window must be at least 2"),
        Check(c.watermark.gamma > 0 && c.watermark.gamma < 1, "watermark.gamma must be in (0, 1)"),
        Check(c.watermark.scheme != WatermarkKind::kCharacter ||
                  (std::lround(c.watermark.gamma * 95) >= 1 && std::lround(c.watermark.gamma * 95) <= 94),
              "watermark.gamma: the character scheme needs round(gamma * 95) in 1 to 94"),
        Check(c.target_fpr >= 0 && c.target_fpr < 1, "target_fpr must be in [0, 1)"),
        Check(c.proactive.probes.size() <= 1000, "proactive.probes: at most 1000")}) {
    if (!s.ok()) return s;
  }
  return c;
}

nlohmann::json WriteGateConfig::ToJson() const {
  return {{"memsad",
           {{"enabled", memsad.enabled},
            {"history_capacity", memsad.history_capacity},
            {"mode", ToString(memsad.mode)},
            {"kappa", memsad.kappa},
            {"delta", memsad.delta},
            {"uncalibrated_max_threshold", memsad.uncalibrated_max_threshold},
            {"recalibrate_every", memsad.recalibrate_every},
            {"recalibrate_window", memsad.recalibrate_window}}},
          {"memsad_plus", {{"enabled", memsad_plus.enabled}}},
          {"watermark",
           {{"enabled", watermark.enabled},
            {"scheme", ToString(watermark.scheme)},
            {"gamma", watermark.gamma},
            {"z_threshold", watermark.z_threshold}}},
          {"validation", {{"enabled", validation.enabled}, {"rules_file", validation.rules_file}}},
          {"proactive",
           {{"enabled", proactive.enabled},
            {"probes", proactive.probes},
            {"uncalibrated_tau", proactive.uncalibrated_tau}}},
          {"target_fpr", target_fpr}};
}

}  // namespace bulwark
