#include "detect/watermark_marker.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <utility>

namespace bulwark {
namespace {

// Pairs usable in both directions. Lowercase; matched case-insensitively on word boundaries.
constexpr std::array<std::pair<std::string_view, std::string_view>, 40> kVariants = {{
    {"do not", "don't"},       {"does not", "doesn't"},   {"did not", "didn't"},     {"is not", "isn't"},
    {"are not", "aren't"},     {"was not", "wasn't"},     {"were not", "weren't"},   {"cannot", "can't"},
    {"will not", "won't"},     {"would not", "wouldn't"}, {"should not", "shouldn't"}, {"could not", "couldn't"},
    {"have not", "haven't"},   {"has not", "hasn't"},     {"i am", "i'm"},           {"it is", "it's"},
    {"that is", "that's"},     {"you are", "you're"},     {"we are", "we're"},       {"they are", "they're"},
    {"i have", "i've"},        {"i will", "i'll"},        {"we will", "we'll"},      {"let us", "let's"},
    {"there is", "there's"},   {"what is", "what's"},     {"colour", "color"},       {"favourite", "favorite"},
    {"organise", "organize"},  {"centre", "center"},      {"grey", "gray"},          {"travelling", "traveling"},
    {"cancelled", "canceled"}, {"behaviour", "behavior"}, {"programme", "program"},  {"licence", "license"},
    {"catalogue", "catalog"},  {"realise", "realize"},    {"okay", "ok"},            {"e-mail", "email"},
}};

struct Word {
  size_t begin, end;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// `replacement` with the capitalization of `original`: ALL CAPS, Capitalized, or as given.
std::string MatchCase(std::string_view original, std::string_view replacement) {
  std::string out(replacement);
  const bool first_upper = !original.empty() && std::isupper(static_cast<unsigned char>(original[0]));
  const bool all_upper = original.size() > 1 && std::all_of(original.begin(), original.end(), [](char c) {
                           return !std::isalpha(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c));
                         });
  if (all_upper) {
    for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  } else if (first_upper && !out.empty()) {
    out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  }
  return out;
}

std::vector<Word> Words(std::string_view text) {
  std::vector<Word> words;
  size_t i = 0;
  auto is_word = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '\'' || c == '-'; };
  while (i < text.size()) {
    if (!std::isalpha(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_word(text[j])) ++j;
    while (j > i && !std::isalpha(static_cast<unsigned char>(text[j - 1]))) --j;  // no trailing ' or -
    words.push_back({i, j});
    i = j + 1;
  }
  return words;
}

// A substitution site: the span [begin, end) and its candidate replacements.
struct Site {
  size_t begin, end;
  std::vector<std::string> candidates;
};

}  // namespace

MarkedText MarkText(std::string_view text, const WatermarkScheme& scheme, const SynonymTable* synonyms,
                    double z_target) {
  MarkedText result;
  result.before = scheme.Score(text);
  const std::vector<Word> words = Words(text);
  std::vector<Site> sites;
  for (size_t w = 0; w < words.size(); ++w) {
    const std::string_view word = text.substr(words[w].begin, words[w].end - words[w].begin);
    // Two-word phrases first ("do not" -> "don't"), only when separated by exactly one space.
    if (w + 1 < words.size() && words[w + 1].begin == words[w].end + 1 && text[words[w].end] == ' ') {
      const std::string_view pair = text.substr(words[w].begin, words[w + 1].end - words[w].begin);
      const std::string lower = Lower(pair);
      for (const auto& [a, b] : kVariants) {
        if (lower == a) {
          sites.push_back({words[w].begin, words[w + 1].end, {MatchCase(pair, b)}});
          break;
        }
      }
      if (!sites.empty() && sites.back().begin == words[w].begin) {
        ++w;
        continue;
      }
    }
    const std::string lower = Lower(word);
    Site site{words[w].begin, words[w].end, {}};
    for (const auto& [a, b] : kVariants) {
      if (lower == a) site.candidates.push_back(MatchCase(word, b));
      if (lower == b) site.candidates.push_back(MatchCase(word, a));
    }
    if (site.candidates.empty() && synonyms != nullptr) {
      for (const std::string& s : synonyms->GroupOf(lower)) {
        if (s != lower) site.candidates.push_back(MatchCase(word, s));
      }
    }
    if (!site.candidates.empty()) sites.push_back(std::move(site));
  }
  // Coordinate ascent on the exact z-score: visit the sites in order, give each the choice
  // (original or a candidate) that maximizes z with every other site fixed, and stop as soon as
  // z reaches the target. Pairs are counted once in the score, so gains do not simply add up;
  // evaluating the whole text keeps the search honest. A few passes settle it.
  std::vector<int> choice(sites.size(), -1);  // -1: original text
  auto render = [&] {
    std::string out;
    size_t pos = 0;
    for (size_t i = 0; i < sites.size(); ++i) {
      if (choice[i] < 0) continue;
      out.append(text.substr(pos, sites[i].begin - pos));
      out.append(sites[i].candidates[static_cast<size_t>(choice[i])]);
      pos = sites[i].end;
    }
    out.append(text.substr(pos));
    return out;
  };
  result.text = std::string(text);
  result.after = result.before;
  constexpr int kPasses = 3;
  for (int pass = 0; pass < kPasses && result.after.z < z_target; ++pass) {
    bool improved = false;
    for (size_t i = 0; i < sites.size() && result.after.z < z_target; ++i) {
      const int kept = choice[i];
      int best = kept;
      WatermarkScore best_score = result.after;
      std::string best_text;
      for (int c = -1; c < static_cast<int>(sites[i].candidates.size()); ++c) {
        if (c == kept) continue;
        choice[i] = c;
        std::string candidate = render();
        const WatermarkScore score = scheme.Score(candidate);
        if (score.z > best_score.z) {  // strictly better: no edit without a gain
          best = c;
          best_score = score;
          best_text = std::move(candidate);
        }
      }
      choice[i] = best;
      if (best != kept) {
        result.text = std::move(best_text);
        result.after = best_score;
        improved = true;
      }
    }
    if (!improved) break;
  }
  for (size_t i = 0; i < sites.size(); ++i) {
    if (choice[i] >= 0) {
      result.edits.push_back({sites[i].begin, std::string(text.substr(sites[i].begin, sites[i].end - sites[i].begin)),
                              sites[i].candidates[static_cast<size_t>(choice[i])]});
    }
  }
  result.reached_target = result.after.z >= z_target;
  return result;
}

}  // namespace bulwark
