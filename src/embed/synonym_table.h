// SynonymTable: WordNet synonyms as the lexical embedder sees them. Two single-word lemmas are
// synonyms when the WordNetCanonicalizer maps both to the same representative, i.e. their most
// frequent senses are the same synset ("car", "auto", "automobile", "motorcar"). Substituting one
// for another therefore leaves the embedder's word features unchanged.
//
// Used by the watermark marker (meaning-preserving substitutions a user reviews in a diff) and by
// the synonym-substitution adaptive attack (MemSAD paper Sec. 4.5, 6.4).
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/status/statusor.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "embed/string_view_hash.h"
#include "embed/wordnet_canonicalizer.h"

namespace bulwark {

class SynonymTable {
 public:
  // Built from the shared canonicalizer of `dir` (see WordNetCanonicalizer::Shared); cached per
  // process like it. Same errors.
  [[nodiscard]] static absl::StatusOr<std::shared_ptr<const SynonymTable>> Shared(
      const std::string& dir = std::string(WordNetCanonicalizer::kDefaultDir));

  // The lemmas of `word`'s group, `word` included, sorted; empty unless `word` (lowercase ASCII)
  // is itself a single-word WordNet lemma, not a stopword, with at least one synonym.
  std::span<const std::string> GroupOf(std::string_view word) const;

  size_t group_count() const { return groups_.size(); }

 private:
  SynonymTable() = default;
  std::shared_ptr<const WordNetCanonicalizer> canonicalizer_;
  // canonical representative -> member lemmas, sorted
  absl::flat_hash_map<std::string, std::vector<std::string>, StringViewHash, StringViewEq> groups_;
};

}  // namespace bulwark
