// ToStoreOptions: the typed public Options (include/bulwark/options.h) as the internal JSON
// configurations MemoryStore reads (embedder_config, write_gate_config, retrieval_config).
#include <absl/strings/str_cat.h>

#include <fstream>
#include <iterator>
#include <string>
#include <system_error>

#include "api/db_impl.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "storage/store_layout.h"

namespace bulwark {
namespace {

// A gate configuration file is small; anything larger is not one.
constexpr std::uintmax_t kMaxGateConfigBytes = 1 << 20;

absl::Status BadOption(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("options.", ToAbsl(field), ": ", ToAbsl(problem)));
}

absl::StatusOr<nlohmann::json> EmbedderConfig(const EmbedderOptions& o) {
  using Kind = EmbedderOptions::Kind;
  switch (o.kind) {
    case Kind::kAsCreated:
      return nlohmann::json();
    case Kind::kLexical:
      return nlohmann::json{{"kind", "lexical"}, {"synonyms", o.synonyms}};
    case Kind::kBert:
      if (o.model_dir.empty()) return BadOption("embedder.model_dir", "required for the bert embedder");
      return nlohmann::json{{"kind", "bert"}, {"path", o.model_dir.string()}};
    case Kind::kHttp: {
      if (o.url.empty()) return BadOption("embedder.url", "required for the http embedder");
      if (o.model.empty()) return BadOption("embedder.model", "required for the http embedder");
      if (o.dimension <= 0)
        return BadOption("embedder.dimension", "required (positive) for the http embedder");
      if (o.timeout_ms < 0) return BadOption("embedder.timeout_ms", "must not be negative");
      nlohmann::json j = {{"kind", "http"}, {"url", o.url}, {"model", o.model}, {"dimension", o.dimension}};
      if (!o.api_key_env.empty()) j["api_key_env"] = o.api_key_env;
      if (o.timeout_ms > 0) j["timeout_ms"] = o.timeout_ms;
      return j;
    }
  }
  return BadOption("embedder.kind", "unknown kind");
}

// The JSON object in the file at `path`, read with its size bounded.
absl::StatusOr<nlohmann::json> ReadGateFile(const std::filesystem::path& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return BadOption("write_gate.config_file", absl::StrCat(path.string(), ": ", ec.message()));
  if (size > kMaxGateConfigBytes) {
    return BadOption("write_gate.config_file", absl::StrCat(path.string(), " is larger than 1 MiB"));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof())
    return BadOption("write_gate.config_file", absl::StrCat("cannot read ", path.string()));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return BadOption("write_gate.config_file", absl::StrCat(path.string(), " is not a JSON object"));
  }
  return j;
}

absl::StatusOr<nlohmann::json> WriteGateConfigJson(const std::filesystem::path& dir,
                                                   const WriteGateOptions& o) {
  const std::pair<const char*, const std::optional<bool>*> switches[] = {
      {"memsad", &o.memsad},       {"memsad_plus", &o.memsad_plus},
      {"proactive", &o.proactive}, {"validation", &o.validation},
      {"watermark", &o.watermark}, {"conflict", &o.conflict},
      {"flood", &o.flood}};
  bool typed = o.target_fpr.has_value();
  for (const auto& [name, value] : switches) typed = typed || value->has_value();
  nlohmann::json config;
  if (!o.config_file.empty()) {
    BULWARK_ASSIGN_OR_RETURN(config, ReadGateFile(o.config_file));
  } else if (!typed) {
    return nlohmann::json();  // the store reads <dir>/gate.json itself
  } else {
    std::error_code ec;
    const std::filesystem::path store_file = StoreLayout(dir).write_gate_config();
    if (std::filesystem::exists(store_file, ec)) {
      BULWARK_ASSIGN_OR_RETURN(config, ReadGateFile(store_file));
    } else {
      config = nlohmann::json::object();
    }
  }
  for (const auto& [name, value] : switches) {
    if (!value->has_value()) continue;
    nlohmann::json& section = config[name];
    if (section.is_null()) section = nlohmann::json::object();
    if (!section.is_object())
      return BadOption("write_gate.config_file", absl::StrCat(name, " must be an object"));
    section["enabled"] = **value;
  }
  if (o.target_fpr) {
    if (!(*o.target_fpr >= 0 && *o.target_fpr < 1))
      return BadOption("write_gate.target_fpr", "must be in [0, 1)");
    config["target_fpr"] = *o.target_fpr;
  }
  return config;
}

}  // namespace

HoneypotMode ToHoneypotMode(RetrievalOptions::Honeypots honeypots) {
  switch (honeypots) {
    case RetrievalOptions::Honeypots::kOff:
      return HoneypotMode::kOff;
    case RetrievalOptions::Honeypots::kBlock:
      return HoneypotMode::kBlock;
    case RetrievalOptions::Honeypots::kMonitor:
      break;
  }
  return HoneypotMode::kMonitor;
}

absl::StatusOr<StoreOptions> ToStoreOptions(const std::filesystem::path& dir, const Options& options) {
  StoreOptions out;
  BULWARK_ASSIGN_OR_RETURN(out.embedder_config, EmbedderConfig(options.embedder));
  out.embedder = options.embedder.instance;
  BULWARK_ASSIGN_OR_RETURN(out.write_gate_config, WriteGateConfigJson(dir, options.write_gate));
  out.retrieval_config = {
      {"default", options.retrieval.ranking == RetrievalOptions::Ranking::kVector ? "vector" : "hybrid"}};
  if (options.retrieval.gate_refresh_ms < 0)
    return BadOption("retrieval.gate_refresh_ms", "must not be negative");
  out.keyring_path = options.keyring_path;
  out.max_text_bytes = options.limits.max_text_bytes;
  out.max_metadata_bytes = options.limits.max_metadata_bytes;
  out.max_batch_entries = options.limits.max_batch_entries;
  out.other_writers_check_ms = options.other_writers_check_ms;
  out.index_snapshot_min_rows = options.index_snapshot_min_rows;
  out.env = options.env;
  return out;
}

}  // namespace bulwark
