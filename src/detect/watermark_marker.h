// Marks text for the watermark detector (`bulwark watermark mark`): rewrites a legitimate
// writer's text so that its green-character z-score reaches a target, using only substitutions
// a user can review in a diff:
//   * contractions and their expansions ("do not" <-> "don't", "I am" <-> "I'm", ...),
//   * British/American spelling pairs ("colour" <-> "color", ...),
//   * WordNet synonyms that share the word's most frequent sense (SynonymTable), if given.
// Search: coordinate ascent on the exact z-score over the substitution sites, stopping as soon as
// z >= z_target, so no more words change than needed. Short texts, or texts with few
// substitutable words, may not reach the target: the result says so (reached_target).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "detect/watermark.h"
#include "embed/synonym_table.h"

namespace bulwark {

struct WatermarkEdit {
  size_t offset = 0;  // byte offset in the original text
  std::string before;
  std::string after;
};

struct MarkedText {
  std::string text;
  std::vector<WatermarkEdit> edits;  // by offset
  WatermarkScore before;
  WatermarkScore after;
  bool reached_target = false;  // after.z >= z_target
};

// `synonyms` may be null (contractions and spellings only).
MarkedText MarkText(std::string_view text, const WatermarkScheme& scheme, const SynonymTable* synonyms,
                    double z_target);

}  // namespace bulwark
