// Embedder: text -> L2-normalized float vector. Cosine similarity is the inner product.
#pragma once

#include <absl/status/statusor.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

// Identifies a vector space. Two embedders with equal fingerprints produce the same vector for
// the same text; a store refuses to open with an embedder whose fingerprint differs from the one
// it was created with.
struct EmbedderFingerprint {
  std::string name;  // "lexical", "http", "bert"
  int dimension = 0;
  std::string config_hash;       // hex digest of everything that changes the vectors
  std::string ToString() const;  // "lexical/384/ab12..."
  bool operator==(const EmbedderFingerprint&) const = default;
};

class Embedder {
 public:
  virtual ~Embedder() = default;

  virtual int dimension() const = 0;
  virtual EmbedderFingerprint Fingerprint() const = 0;

  // Embeds one text. On success the vector has dimension() entries and unit L2 norm (an input
  // with no features maps to the zero vector). Errors: InvalidArgument for text the embedder
  // cannot take; Unavailable / DeadlineExceeded for a remote embedder that failed.
  [[nodiscard]] virtual absl::StatusOr<std::vector<float>> Embed(std::string_view text) const = 0;

  // Embeds many texts; result i belongs to texts[i]. The default calls Embed in a loop; remote
  // embedders override it to batch. All-or-nothing: any failure fails the whole call.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::vector<float>>> EmbedBatch(
      std::span<const std::string> texts) const;
};

}  // namespace bulwark
