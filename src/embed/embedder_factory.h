// CreateEmbedder: an embedder from its JSON configuration (the internal form of the public
// EmbedderOptions, bulwark/options.h). Implemented in embedder_factory.cc.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "bulwark/embedder.h"

namespace bulwark {

// Builds an embedder from its JSON configuration, e.g.
//   {"kind": "lexical"}                               (WordNet synonyms on when the data exists)
//   {"kind": "lexical", "synonyms": false}
//   {"kind": "http", "url": "http://127.0.0.1:8080", "model": "m", "dimension": 384}
//   {"kind": "bert", "path": "/models/all-MiniLM-L6-v2"}   (a local sentence-transformers directory)
// Errors: InvalidArgument for an unknown kind or a bad field; the bert kind also fails to load a
// missing, corrupt or unsupported model (BertEmbedder::Load lists the codes).
[[nodiscard]] absl::StatusOr<std::unique_ptr<Embedder>> CreateEmbedder(const nlohmann::json& config);

}  // namespace bulwark
