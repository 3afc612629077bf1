#include "detect/watermark_marker.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <cstdlib>
#include <span>

#include "detect/char_watermark.h"

namespace bulwark {
namespace {

bool AllCapsWord(std::string_view s) {
  int letters = 0;
  for (char c : s) {
    if (absl::ascii_islower(c)) return false;
    letters += absl::ascii_isupper(c);
  }
  return letters >= 2;
}

// `replacement` written the way `original` (a rendering of variant `original_display`) is:
// ALL CAPS if the writer capitalized a word that is not capitalized by itself; a capital first
// letter at the start of a sentence or where the writer added one.
std::string MatchCase(std::string_view original, std::string_view original_display, std::string replacement,
                      bool sentence_start) {
  if (AllCapsWord(original) && !AllCapsWord(original_display)) {
    for (char& c : replacement) c = absl::ascii_toupper(c);
  } else if (sentence_start ||
             (absl::ascii_isupper(original[0]) && !absl::ascii_isupper(original_display[0]))) {
    if (!replacement.empty()) replacement[0] = absl::ascii_toupper(replacement[0]);
  }
  return replacement;
}

// Whether `word` takes "an": a vowel sound, by spelling, with the usual exceptions, and numbers
// read aloud (8, 11, 18, 80-89, 800...).
bool TakesAn(std::string_view word) {
  if (word.empty()) return false;
  if (absl::ascii_isdigit(word[0])) {
    size_t digits = 0;
    while (digits < word.size() && absl::ascii_isdigit(word[digits])) ++digits;
    const std::string_view number = word.substr(0, digits);
    if (number[0] == '8') return true;
    return (number.substr(0, 2) == "11" || number.substr(0, 2) == "18") &&
           (digits == 2 || digits == 4 || digits == 5);
  }
  std::string lower(word.substr(0, std::min<size_t>(word.size(), 6)));
  for (char& c : lower) c = static_cast<char>(absl::ascii_isupper(c) ? c + 32 : c);
  for (std::string_view consonant_sound : {"one", "once", "uni", "use", "usu", "eu", "ewe", "uk"}) {
    if (lower.rfind(consonant_sound, 0) == 0) return false;
  }
  for (std::string_view vowel_sound : {"hour", "honest", "honor", "honour", "heir"}) {
    if (lower.rfind(vowel_sound, 0) == 0) return true;
  }
  if (AllCapsWord(word.substr(0, std::min<size_t>(word.size(), 2)))) {
    // Initialisms read letter by letter: "an FAQ", "a TV", "an OK".
    return std::string_view("AEFHILMNORSX").find(word[0]) != std::string_view::npos;
  }
  return std::string_view("aeiou").find(lower[0]) != std::string_view::npos;
}

// The article token ("a" / "an", any case) ending one space before `begin`, as [start, begin - 1).
bool ArticleBefore(std::string_view text, size_t begin, size_t* start) {
  if (begin < 2 || text[begin - 1] != ' ') return false;
  size_t b = begin - 1;
  while (b > 0 && absl::ascii_isalpha(text[b - 1])) --b;
  if (b > 0 && (absl::ascii_isalpha(text[b - 1]) || absl::ascii_isdigit(text[b - 1]) || text[b - 1] == '-' ||
                text[b - 1] == '\'')) {
    return false;
  }
  const std::string_view word = text.substr(b, begin - 1 - b);
  if (word != "a" && word != "A" && word != "an" && word != "An" && word != "AN") return false;
  *start = b;
  return true;
}

// `text` with site i of `sites` (its sites, in text order) rewritten to variant choice[i] (-1, or
// the site's own variant: kept): each rewrite in the case of the original, with an "a"/"an"
// before it and, for a sentence join, the next word's capital adjusted in the same edit. The edits
// are appended to `edits` unless it is null.
std::string RenderSiteChoices(std::string_view text, const WatermarkLexicon& lexicon,
                              std::span<const VariantSite> sites, std::span<const int> choice,
                              std::vector<WatermarkEdit>* edits) {
  auto changed = [&](size_t i) { return choice[i] >= 0 && choice[i] != sites[i].variant; };
  std::string out;
  size_t pos = 0;
  int recase = 0;  // after a sentence join changed: +1 capitalize, -1 lowercase the next word
  for (size_t i = 0; i < sites.size(); ++i) {
    const VariantSite& site = sites[i];
    if (!changed(i) || site.begin < pos) continue;
    size_t begin = site.begin, end = site.end;
    const std::string_view original = text.substr(site.begin, site.end - site.begin);
    std::string replacement =
        MatchCase(original, lexicon.Render(site, text, site.variant), lexicon.Render(site, text, choice[i]),
                  AtSentenceStart(text, site.begin));
    if (recase != 0 && begin == pos) {  // this site starts the word a join re-cases
      replacement[0] = recase > 0 ? absl::ascii_toupper(replacement[0]) : absl::ascii_tolower(replacement[0]);
    }
    recase = 0;
    if (site.group.kind == VariantKind::kSentence) {
      // ". The" | "; the": the next word's capital goes with the period ("I" keeps its own).
      const bool period = choice[i] == 0;
      const bool pronoun_i = end < text.size() && text[end] == 'I' &&
                             (end + 1 >= text.size() || !absl::ascii_isalpha(text[end + 1]));
      if (!pronoun_i) {
        const bool next_changed = i + 1 < sites.size() && sites[i + 1].begin == end && changed(i + 1);
        if (next_changed) {
          recase = period ? 1 : -1;
        } else if (end < text.size()) {
          replacement.push_back(period ? absl::ascii_toupper(text[end]) : absl::ascii_tolower(text[end]));
          ++end;
        }
      }
    }
    // "an 8pm call" -> "a 20:00 call".
    size_t article = 0;
    if (ArticleBefore(text, begin, &article) && article >= pos) {
      const std::string_view a = text.substr(article, begin - 1 - article);
      const bool has_an = a.size() == 2;
      if (const bool an = TakesAn(replacement); has_an != an) {
        const bool upper = absl::ascii_isupper(a[0]), all_upper = a == "AN";
        const char* fixed = an ? (upper ? "An " : "an ") : (all_upper || upper ? "A " : "a ");
        replacement.insert(0, fixed);
        begin = article;
      }
    }
    out.append(text.substr(pos, begin - pos));
    out.append(replacement);
    if (edits) edits->push_back({begin, std::string(text.substr(begin, end - begin)), replacement});
    pos = end;
  }
  out.append(text.substr(pos));
  return out;
}

// The lexical scheme: turns red sites green, safest kinds first, until the text verifies.
MarkedText MarkLexical(std::string_view text, const LexicalWatermarkScheme& scheme, double z_target) {
  MarkedText result;
  result.text = std::string(text);
  result.before = scheme.Score(text);
  result.after = result.before;
  const WatermarkLexicon& lexicon = scheme.lexicon();
  const std::vector<LexicalWatermarkScheme::ScoredSite> sites = scheme.ScoredSites(text);
  result.sites = sites.size();
  // With every site green, the most any marking can reach.
  std::vector<double> p;
  for (const auto& s : sites) p.push_back(scheme.GreenFraction(s.site.group));
  result.best = ScoreGreenSites(p, sites.size());
  if (WatermarkScheme::Verifies(result.before, z_target)) {
    result.reached_target = true;
    return result;
  }
  if (!WatermarkScheme::Verifies(result.best, z_target)) return result;  // not enough channel

  std::vector<VariantSite> plain_sites;
  for (const auto& s : sites) plain_sites.push_back(s.site);
  std::vector<int> choice(sites.size(), -1);  // the variant a site is rewritten to; -1: keep
  // Red sites to turn green: safest kinds first, then in text order.
  std::vector<size_t> order;
  for (size_t i = 0; i < sites.size(); ++i) {
    if (!sites[i].green()) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return sites[a].site.group.preference < sites[b].site.group.preference;
  });
  for (size_t i : order) {
    // The green variant closest to the one the text uses (ties: the lower index).
    const int current = sites[i].site.variant;
    int best = -1;
    for (int v = 0; v < sites[i].site.group.size; ++v) {
      if ((sites[i].green_mask >> v & 1) && (best < 0 || std::abs(v - current) < std::abs(best - current)))
        best = v;
    }
    choice[i] = best;
    result.text = RenderSiteChoices(text, lexicon, plain_sites, choice, nullptr);
    result.after = scheme.Score(result.text);
    if (WatermarkScheme::Verifies(result.after, z_target)) break;
  }
  result.edits.clear();
  result.text = RenderSiteChoices(text, lexicon, plain_sites, choice, &result.edits);
  result.after = scheme.Score(result.text);
  result.reached_target = WatermarkScheme::Verifies(result.after, z_target);
  return result;
}

// The character scheme: coordinate ascent over the sites in the lexical marker's order (safest
// kinds first, then text order). At each site, tries every other variant on the whole text and
// keeps the one with the highest z if it beats the current z; stops as soon as the text
// verifies. At most kCharMarkPasses passes over the sites (each site's best variant depends on the
// others through the distinct pairs they share). If the target is not reached, the text is
// returned unchanged, with `best` the highest score the search found.
constexpr int kCharMarkPasses = 2;

MarkedText MarkCharacter(std::string_view text, const CharWatermarkScheme& scheme, double z_target) {
  MarkedText result;
  result.text = std::string(text);
  result.before = scheme.Score(text);
  result.after = result.before;
  result.best = result.before;
  const WatermarkLexicon& lexicon = WatermarkLexicon::Default();
  const std::vector<VariantSite> sites = lexicon.Sites(text);
  result.sites = sites.size();
  if (WatermarkScheme::Verifies(result.before, z_target)) {
    result.reached_target = true;
    return result;
  }
  std::vector<size_t> order(sites.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sites[a].group.preference < sites[b].group.preference; });
  std::vector<int> choice(sites.size(), -1);  // the variant a site is rewritten to; -1: keep
  WatermarkScore current = result.before;
  bool reached = false;
  for (int pass = 0; pass < kCharMarkPasses && !reached; ++pass) {
    bool improved = false;
    for (size_t i : order) {
      const int kept = choice[i] < 0 ? sites[i].variant : choice[i];
      int best_variant = kept;
      for (int v = 0; v < sites[i].group.size; ++v) {
        if (v == kept) continue;
        choice[i] = v;
        const WatermarkScore s = scheme.Score(RenderSiteChoices(text, lexicon, sites, choice, nullptr));
        if (s.z > current.z) {
          current = s;
          best_variant = v;
        }
      }
      choice[i] = best_variant;
      improved = improved || best_variant != kept;
      if (WatermarkScheme::Verifies(current, z_target)) {
        reached = true;
        break;
      }
    }
    if (!improved) break;
  }
  result.best = current;
  if (!reached) return result;  // unchanged, as the lexical marker leaves a text it cannot mark
  result.text = RenderSiteChoices(text, lexicon, sites, choice, &result.edits);
  result.after = scheme.Score(result.text);
  result.reached_target = WatermarkScheme::Verifies(result.after, z_target);
  return result;
}

}  // namespace

MarkedText MarkText(std::string_view text, const WatermarkScheme& scheme, double z_target) {
  switch (scheme.kind()) {
    case WatermarkKind::kLexical:
      return MarkLexical(text, static_cast<const LexicalWatermarkScheme&>(scheme), z_target);
    case WatermarkKind::kCharacter:
      return MarkCharacter(text, static_cast<const CharWatermarkScheme&>(scheme), z_target);
  }
  return MarkedText{std::string(text)};
}

}  // namespace bulwark
