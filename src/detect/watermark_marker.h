// Marks text for the watermark detector (`bulwark watermark mark`): rewrites a legitimate
// writer's text so that it verifies, changing only variants in the substitution channel
// (WatermarkLexicon: contractions, British/American spellings, hyphenation, a few
// interchangeable words, titles, and the format of times, dates, percentages and small counts),
// each listed as an edit a user can review in a diff. An "a"/"an" before a changed word is
// adjusted in the same edit.
//
// Marking is deterministic and needs no search: the null distribution depends only on which
// groups the text uses, not on their variants, so turning any one non-green group green raises
// the statistic by one. The marker first checks that the text verifies with all its groups green
// (`best`); if it does not, the text has too few substitutable words and is returned unchanged.
// Otherwise it turns groups green, safest kinds first (spellings and contractions, then formats
// of times, dates and numbers, then interchangeable words), and stops as soon as the text
// verifies, so no more words change than needed.
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
  WatermarkScore best;  // every group the text uses green: the most marking can reach
  bool reached_target = false;  // after verifies at z_target
};

MarkedText MarkText(std::string_view text, const WatermarkScheme& scheme, double z_target);

}  // namespace bulwark
