// CreateEmbedder: turns an embedder's JSON configuration into an instance by dispatching on
// "kind" to the implementation's FromConfig. A new kind is one branch here.
#include "embed/embedder_factory.h"

#include <absl/strings/str_cat.h>

#include "bulwark/embedder.h"
#include "core/status_macros.h"
#include "embed/bert/bert_embedder.h"
#include "embed/http_embedder.h"
#include "embed/lexical_embedder.h"

namespace bulwark {

absl::StatusOr<std::unique_ptr<Embedder>> CreateEmbedder(const nlohmann::json& config) {
  if (!config.is_object()) {
    return absl::InvalidArgumentError("embedder config must be a JSON object with a \"kind\"");
  }
  auto kind = config.find("kind");
  if (kind == config.end() || !kind->is_string()) {
    return absl::InvalidArgumentError("embedder config needs a string \"kind\" (lexical, http, bert)");
  }
  const std::string& name = kind->get_ref<const std::string&>();
  if (name == "lexical") {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<LexicalEmbedder> lexical, LexicalEmbedder::FromConfig(config));
    return std::unique_ptr<Embedder>(std::move(lexical));
  }
  if (name == "http") {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<HttpEmbedder> http, HttpEmbedder::FromConfig(config));
    return std::unique_ptr<Embedder>(std::move(http));
  }
  if (name == "bert") {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<BertEmbedder> bert, BertEmbedder::FromConfig(config));
    return std::unique_ptr<Embedder>(std::move(bert));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown embedder kind \"", name, "\" (known: lexical, http, bert)"));
}

}  // namespace bulwark
