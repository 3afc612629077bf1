// Marks text for the watermark detector (`bulwark watermark mark`): rewrites a legitimate
// writer's text so that it verifies, changing only variants in the substitution channel
// (WatermarkLexicon: contractions, British/American spellings, hyphenation, a few
// interchangeable words, titles, and the format of times, dates, percentages and small counts),
// each listed as an edit a user can review in a diff. An "a"/"an" before a changed word is
// adjusted in the same edit.
//
// Lexical scheme. Marking is deterministic and needs no search: the null distribution depends
// only on which groups the text uses, not on their variants, so turning any one non-green group
// green raises the statistic by one. The marker first checks that the text verifies with all its groups green
// (`best`); if it does not, the text has too few substitutable words and is returned unchanged.
// Otherwise it turns groups green, safest kinds first (spellings and contractions, then formats
// of times, dates and numbers, then interchangeable words), and stops as soon as the text
// verifies, so no more words change than needed.
//
// Character scheme (detect/char_watermark.h). The same sites and the same edits, but the score
// counts every character, so no variant is "green" by itself: the marker runs a coordinate ascent
// over the sites in the same order, choosing at each the variant that gives the whole text the
// highest z, and stops as soon as the text verifies (at most two passes over the sites). Whether
// a text can be marked depends on the key. If the search does not reach z_target the text is
// returned unchanged, as with the lexical scheme, with `best` the highest score it found.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "detect/watermark.h"

namespace bulwark {

struct WatermarkEdit {
  size_t offset = 0;  // byte offset in the original text
  std::string before;
  std::string after;
};

struct MarkedText {
  std::string text;
  std::vector<WatermarkEdit> edits;  // by offset, non-overlapping
  WatermarkScore before;
  WatermarkScore after;
  // Lexical: every group the text uses green, the most marking can reach. Character: the highest
  // score the marker's search found (a lower bound on what marking can reach).
  WatermarkScore best;
  size_t sites = 0;             // substitution sites in the text
  bool reached_target = false;  // after verifies at z_target
};

// Marks `text` under `scheme` (either kind) to verify at z_target. If `text` already verifies it
// is returned unchanged with reached_target; if it cannot be marked, unchanged without.
MarkedText MarkText(std::string_view text, const WatermarkScheme& scheme, double z_target);

}  // namespace bulwark
