#include "detect/watermark_lexicon.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "detect/watermark_number_sites.h"
#include "detect/watermark_punctuation_sites.h"
#include "detect/watermark_scan.h"
#include "detect/watermark_word_table.h"

namespace bulwark {

bool AtSentenceStart(std::string_view t, size_t i) {
  size_t j = i;
  while (j > 0 && (t[j - 1] == ' ' || t[j - 1] == '"' || t[j - 1] == '\'' || t[j - 1] == '(')) --j;
  if (j == 0 || t[j - 1] == '\n' || t[j - 1] == '\r') return true;
  const char c = t[j - 1];
  if (c == '!' || c == '?' || c == ':') return true;
  if (c != '.') return false;
  // Not after a title's period ("Dr. Grey").
  size_t b = j - 1;
  while (b > 0 && absl::ascii_isalpha(t[b - 1])) --b;
  const std::string_view word = t.substr(b, j - 1 - b);
  return !watermark_scan::InList(watermark_scan::kTitles, word);
}

// ---------------------------------------------------------------------------------------------

WatermarkLexicon::WatermarkLexicon() {
  // The built-in word groups (data/watermark/word_groups.tsv, compiled in). A table that does not
  // parse is a bug of the build, caught by watermark_word_table_test.
  absl::StatusOr<std::vector<WordGroupSpec>> specs = ParseWordGroupTable(DefaultWordGroupTable());
  if (!specs.ok()) std::abort();
  for (auto& spec : *specs) {
    const auto group = static_cast<uint32_t>(words_.size());
    for (size_t v = 0; v < spec.forms.size(); ++v) {
      std::string lower = spec.forms[v];
      for (char& c : lower) c = absl::ascii_tolower(c);
      const bool inserted = forms_.emplace(lower, Form{group, static_cast<uint8_t>(v)}).second;
      if (!inserted) std::abort();  // a form in two groups: a bug in the table (see the test)
      auto index = [&](std::vector<std::array<bool, kMaxIndexedLength + 1>>& starts, std::string_view word) {
        starts[static_cast<unsigned char>(word[0])][std::min<size_t>(word.size(), kMaxIndexedLength)] = true;
      };
      if (const size_t space = lower.find(' '); space != std::string::npos) {
        pair_first_words_.emplace(lower.substr(0, space), true);
        index(pair_starts_, std::string_view(lower).substr(0, space));
      } else {
        index(single_starts_, lower);
      }
    }
    word_preference_.push_back(spec.preference);
    word_before_word_.push_back(spec.before_word);
    word_keys_.push_back(
        watermark_scan::GroupKey(VariantKind::kWord, watermark_scan::Fnv1a(spec.forms.front())));
    words_.push_back(std::move(spec.forms));
  }
}

const WatermarkLexicon& WatermarkLexicon::Default() {
  static const WatermarkLexicon* lexicon = new WatermarkLexicon();
  return *lexicon;
}

bool WatermarkLexicon::MayStart(std::string_view lowercase, bool pair) const {
  const auto c = static_cast<unsigned char>(lowercase[0]);
  const size_t length = std::min<size_t>(lowercase.size(), kMaxIndexedLength);
  return (pair ? pair_starts_ : single_starts_)[c][length];
}

const WatermarkLexicon::Form* WatermarkLexicon::FindForm(std::string_view lowercase) const {
  auto it = forms_.find(lowercase);
  return it == forms_.end() ? nullptr : &it->second;
}

VariantSite WatermarkLexicon::WordSite(size_t begin, size_t end, const Form& form) const {
  VariantSite site;
  site.begin = begin;
  site.end = end;
  site.group.kind = VariantKind::kWord;
  site.group.value = form.group;
  site.group.size = static_cast<uint8_t>(words_[form.group].size());
  site.group.preference = word_preference_[form.group];
  site.group.key = word_keys_[form.group];
  site.variant = form.variant;
  return site;
}

bool WatermarkLexicon::MatchWord(std::string_view t, size_t begin, size_t e1, VariantSite* site) const {
  constexpr size_t kMaxForm = 40;
  if (e1 - begin > kMaxForm) return false;
  char buf[2 * kMaxForm + 2];
  for (size_t k = begin; k < e1; ++k) buf[k - begin] = absl::ascii_tolower(t[k]);
  const std::string_view first(buf, e1 - begin);
  // The two-word form starting with the word t[b1, e1_), whose lowercase is already in out[0,
  // e1_ - b1); nullptr if none.
  auto pair_at = [&](size_t b1, size_t e1_, char* out, size_t* e2_out) -> const Form* {
    const std::string_view word(out, e1_ - b1);
    if (!MayStart(word, /*pair=*/true) || e1_ + 1 >= t.size() || t[e1_] != ' ' ||
        !watermark_scan::IsTokenStart(t, e1_ + 1) || !pair_first_words_.contains(word)) {
      return nullptr;
    }
    const size_t e2 = watermark_scan::TokenEnd(t, e1_ + 1);
    if (e2 - b1 > 2 * kMaxForm) return nullptr;
    for (size_t k = e1_; k < e2; ++k) out[k - b1] = absl::ascii_tolower(t[k]);
    const Form* form = FindForm(std::string_view(out, e2 - b1));
    if (form == nullptr || !watermark_scan::RightOk(t, e2)) return nullptr;
    *e2_out = e2;
    return form;
  };
  // A two-word form, unless the next two words also form one ("we will not" is "we won't").
  size_t e2 = 0;
  if (const Form* pair = pair_at(begin, e1, buf, &e2);
      pair != nullptr && ContextAllowed(t, begin, e2, *pair)) {
    const size_t b2 = e1 + 1, b2_end = watermark_scan::TokenEnd(t, b2);
    char next[2 * kMaxForm + 2];
    size_t e3 = 0;
    if (b2_end - b2 > kMaxForm) return false;
    for (size_t k = b2; k < b2_end; ++k) next[k - b2] = absl::ascii_tolower(t[k]);
    if (pair_at(b2, b2_end, next, &e3) == nullptr) {
      *site = WordSite(begin, e2, *pair);
      return true;
    }
  }
  if (!watermark_scan::RightOk(t, e1)) return false;
  size_t end = e1;
  const bool possessive = first.size() > 2 && first.substr(first.size() - 2) == "'s";
  const Form* single = MayStart(first, /*pair=*/false) ? FindForm(first) : nullptr;
  // A possessive: "Mum's" is a site at "Mum".
  if (single == nullptr && possessive) {
    end = e1 - 2;
    single = FindForm(first.substr(0, first.size() - 2));
  }
  if (single == nullptr || !ContextAllowed(t, begin, end, *single)) return false;
  *site = WordSite(begin, end, *single);
  return true;
}

bool WatermarkLexicon::ContextAllowed(std::string_view t, size_t begin, size_t end, const Form& form) const {
  if (word_before_word_[form.group]) {
    if (end + 1 >= t.size() || t[end] != ' ' || !watermark_scan::IsTokenStart(t, end + 1)) return false;
    const size_t next_end = watermark_scan::TokenEnd(t, end + 1);
    std::string next(t.substr(end + 1, next_end - end - 1));
    for (char& c : next) c = absl::ascii_tolower(c);
    if (next == "been" || next == "got" || next == "gotten" || next == "had") return false;
  }
  return CaseAllowed(t, begin, form);
}

bool WatermarkLexicon::CaseAllowed(std::string_view t, size_t begin, const Form& form) const {
  // A capitalized word inside a sentence is probably a name ("Harbour Street", "Mr Grey"): not a
  // site, unless the form is capitalized itself ("OK", "I'm", "TV").
  if (!absl::ascii_isupper(t[begin])) return true;
  const std::string& display = words_[form.group][form.variant];
  return absl::ascii_isupper(display[0]) || AtSentenceStart(t, begin);
}

void WatermarkLexicon::Scan(std::string_view t, absl::FunctionRef<void(const VariantSite&)> fn) const {
  watermark_scan::RecentSites recent;
  size_t i = 0;
  while (i < t.size()) {
    if (!watermark_scan::IsTokenStart(t, i)) {
      ++i;
      continue;
    }
    const size_t e = watermark_scan::TokenEnd(t, i);
    // Commas before the token (their span ends where it starts).
    if (VariantSite comma;
        absl::ascii_isalpha(t[i]) && (watermark_scan::MatchOpenerComma(t, i, e, &comma) ||
                                      watermark_scan::MatchConjunctionComma(t, i, e, recent, &comma) ||
                                      watermark_scan::MatchSentenceJoin(t, i, e, &comma))) {
      recent.Add(comma.begin, comma.end);
      fn(comma);
    }
    if (watermark_scan::LeftOk(t, i)) {
      VariantSite site;
      bool found = false;
      if (absl::ascii_isdigit(t[i])) {
        found = watermark_scan::MatchTime(t, i, &site) || watermark_scan::MatchDayMonth(t, i, &site) ||
                watermark_scan::MatchPercent(t, i, &site) || watermark_scan::MatchCount(t, i, e, &site);
      } else if (absl::ascii_isupper(t[i])) {
        found = watermark_scan::MatchMonthDay(t, i, e, &site) || watermark_scan::MatchTitle(t, i, e, &site) ||
                watermark_scan::MatchCount(t, i, e, &site);
      } else if (absl::ascii_isalpha(t[i])) {
        found = watermark_scan::MatchCount(t, i, e, &site);
      }
      found = found || (absl::ascii_isalpha(t[i]) && MatchWord(t, i, e, &site));
      if (found) {
        recent.Add(site.begin, site.end);
        fn(site);
        i = site.end;
        continue;
      }
    }
    i = std::max(e, i + 1);
  }
}

std::vector<VariantSite> WatermarkLexicon::Sites(std::string_view text) const {
  std::vector<VariantSite> sites;
  Scan(text, [&](const VariantSite& s) { sites.push_back(s); });
  return sites;
}

std::string WatermarkLexicon::Render(const VariantSite& site, std::string_view text, int variant) const {
  const VariantGroup& g = site.group;
  switch (g.kind) {
    case VariantKind::kWord:
      return words_[g.value][static_cast<size_t>(variant)];
    case VariantKind::kTitle:
      return std::string(watermark_scan::kTitles[g.value]) + (variant == 0 ? "." : "");
    case VariantKind::kTime:
      return watermark_scan::RenderTime(static_cast<int>(g.value), variant);
    case VariantKind::kDate:
      return watermark_scan::RenderDate(static_cast<int>(g.value / 32), static_cast<int>(g.value % 32),
                                        variant);
    case VariantKind::kCount:
      return variant == 0 ? std::to_string(g.value) : watermark_scan::NumberWord(static_cast<int>(g.value));
    case VariantKind::kComma:
      return variant == 0 ? ", " : " ";
    case VariantKind::kSentence:
      return variant == 0 ? ". " : "; ";
    case VariantKind::kPercent: {
      const std::string_view span = text.substr(site.begin, site.end - site.begin);
      size_t n = 0;
      while (n < span.size() && (absl::ascii_isdigit(span[n]) || span[n] == '.')) ++n;
      const std::string_view number = span.substr(0, n);
      const char* forms[] = {"%", " percent", " per cent"};
      return std::string(number) + forms[variant];
    }
  }
  return {};
}

}  // namespace bulwark
