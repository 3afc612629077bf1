// The number sites of the watermark's substitution channel (detect/watermark_lexicon.h describes
// the channel): times of day ("4pm" | "4 pm" | "4:00pm" | "4:00 pm" | "16:00"), dates without a
// year ("June 1" | "1 June" | "June 1st" | ...), percentages ("5%" | "5 percent" | "5 per cent")
// and counts of 2 to 99 before a plural noun ("3 days" | "three days"). Each Match* reads the
// token at i (a digit, or for dates and counts a capitalized or lowercase word t[i, e)); on a
// site it fills *site and returns true, else returns false and leaves *site alone. Ranges
// ("3-4pm", "1 to 3 June") and dates with a year are not sites.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "detect/watermark_lexicon.h"

namespace bulwark::watermark_scan {

bool MatchTime(std::string_view t, size_t i, VariantSite* site);
// "June 1", "June 1st", "Jun 1" at the capitalized token t[i, e).
bool MatchMonthDay(std::string_view t, size_t i, size_t e, VariantSite* site);
// "1 June", "1st June", "1 Jun" at a digit.
bool MatchDayMonth(std::string_view t, size_t i, VariantSite* site);
bool MatchPercent(std::string_view t, size_t i, VariantSite* site);
// A count in digits or words at the token t[i, e) before a plural noun.
bool MatchCount(std::string_view t, size_t i, size_t e, VariantSite* site);

// Variant `variant` of a time (minutes since midnight), a date (month 1-12, day) and the count n
// (2 to 99) in words, as written.
std::string RenderTime(int minutes, int variant);
std::string RenderDate(int month, int day, int variant);
std::string NumberWord(int n);

}  // namespace bulwark::watermark_scan
