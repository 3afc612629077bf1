// The punctuation sites of the watermark's substitution channel (detect/watermark_lexicon.h
// describes the channel): optional commas (the serial comma, before a conjunction that starts a
// clause with a pronoun subject, after a short opening phrase), two sentences joined by a
// semicolon or not (". The" | "; the"), and titles with or without the period before a
// capitalized name ("Dr. Lee" | "Dr Lee"). Each Match* looks at the token t[i, e); on a site it
// fills *site and returns true, else returns false.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <utility>

#include "detect/watermark_lexicon.h"

namespace bulwark::watermark_scan {

// The spans of the sites found so far (the last 32), so that a rule looking back over the text
// can skip them: what a site's variant looks like must not change what other rules see.
class RecentSites {
 public:
  void Add(size_t begin, size_t end) { spans_[next_++ % spans_.size()] = {begin, end}; }
  bool Covers(size_t pos) const {
    for (size_t k = 0; k < std::min(next_, spans_.size()); ++k) {
      if (pos >= spans_[k].first && pos < spans_[k].second) return true;
    }
    return false;
  }

 private:
  std::array<std::pair<size_t, size_t>, 32> spans_{};
  size_t next_ = 0;
};

// A comma before the conjunction t[i, e) (not where `recent` covers the text it looks back at).
bool MatchConjunctionComma(std::string_view t, size_t i, size_t e, const RecentSites& recent,
                           VariantSite* site);
// A comma after a short opening phrase, at the subject t[i, e) that follows it.
bool MatchOpenerComma(std::string_view t, size_t i, size_t e, VariantSite* site);
// ". " | "; " before the pronoun or determiner t[i, e) that starts the second sentence.
bool MatchSentenceJoin(std::string_view t, size_t i, size_t e, VariantSite* site);
// "Dr." | "Dr" (Mr, Mrs, Ms, Prof) at t[i, e) before a capitalized name.
bool MatchTitle(std::string_view t, size_t i, size_t e, VariantSite* site);

}  // namespace bulwark::watermark_scan
