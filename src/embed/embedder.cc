// The non-virtual parts of the Embedder interface: fingerprint formatting and the default,
// one-text-at-a-time EmbedBatch that local embedders inherit.
#include "bulwark/embedder.h"

#include <absl/strings/str_cat.h>

#include "core/status_macros.h"

namespace bulwark {

std::string EmbedderFingerprint::ToString() const {
  return absl::StrCat(name, "/", dimension, "/", config_hash);
}

absl::StatusOr<std::vector<std::vector<float>>> Embedder::EmbedBatch(
    std::span<const std::string> texts) const {
  std::vector<std::vector<float>> out;
  out.reserve(texts.size());
  for (const std::string& text : texts) {
    BULWARK_ASSIGN_OR_RETURN(std::vector<float> vec, Embed(text));
    out.push_back(std::move(vec));
  }
  return out;
}

}  // namespace bulwark
