#include "detect/char_trigram_model.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "detect/char_trigrams_data.h"

namespace bulwark {
namespace {

constexpr double kL3 = 0.6, kL2 = 0.3, kL1 = 0.09, kL0 = 0.01;

// Context symbol: 0 for '^', 1-26 for a-z; -1 otherwise.
int ContextIndex(char ch) {
  if (ch == '^') return 0;
  if (ch >= 'a' && ch <= 'z') return ch - 'a' + 1;
  return -1;
}

// Outcome symbol: 0-25 for a-z, 26 for '$'; -1 otherwise.
int OutcomeIndex(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch == '$') return 26;
  return -1;
}

}  // namespace

absl::StatusOr<CharTrigramModel> CharTrigramModel::Parse(std::string_view tsv) {
  // Counts C(abc), then the marginals the interpolation needs.
  std::vector<double> tri(kContexts * kContexts * kOutcomes, 0.0);
  double total = 0;
  size_t line_no = 0;
  while (!tsv.empty()) {
    const size_t eol = std::min(tsv.find('\n'), tsv.size());
    const std::string_view line = tsv.substr(0, eol);
    tsv.remove_prefix(std::min(eol + 1, tsv.size()));
    ++line_no;
    if (line.empty()) continue;
    const size_t tab = line.find('\t');
    const std::string_view key = line.substr(0, std::min(tab, line.size()));
    const std::string_view digits = tab == std::string_view::npos ? std::string_view() : line.substr(tab + 1);
    uint64_t count = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (key.size() != 3 || digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
        count == 0 || count >= (uint64_t{1} << 40)) {
      return absl::InvalidArgumentError(
          absl::StrCat("char trigrams: line ", line_no, " is not 'abc<TAB>count'"));
    }
    const int a = ContextIndex(key[0]), b = ContextIndex(key[1]), c = OutcomeIndex(key[2]);
    if (a < 0 || b < 0 || c < 0 || (a != 0 && b == 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("char trigrams: line ", line_no, " has an unknown symbol"));
    }
    tri[(a * kContexts + b) * kOutcomes + c] += static_cast<double>(count);
    total += static_cast<double>(count);
  }
  if (total <= 0) return absl::InvalidArgumentError("char trigrams: no counts");
  std::vector<double> ctx3(kContexts * kContexts, 0.0), bi(kContexts * kOutcomes, 0.0), ctx2(kContexts, 0.0),
      uni(kOutcomes, 0.0);
  for (int a = 0; a < kContexts; ++a) {
    for (int b = 0; b < kContexts; ++b) {
      for (int c = 0; c < kOutcomes; ++c) {
        const double n = tri[(a * kContexts + b) * kOutcomes + c];
        ctx3[a * kContexts + b] += n;
        bi[b * kOutcomes + c] += n;
        ctx2[b] += n;
        uni[c] += n;
      }
    }
  }
  CharTrigramModel model;
  for (int a = 0; a < kContexts; ++a) {
    for (int b = 0; b < kContexts; ++b) {
      for (int c = 0; c < kOutcomes; ++c) {
        double p = kL0 / kOutcomes + kL1 * uni[c] / total;
        if (ctx2[b] > 0) p += kL2 * bi[b * kOutcomes + c] / ctx2[b];
        if (ctx3[a * kContexts + b] > 0)
          p += kL3 * tri[(a * kContexts + b) * kOutcomes + c] / ctx3[a * kContexts + b];
        model.bits_[a * kContexts + b][c] = static_cast<float>(-std::log2(p));
      }
    }
  }
  return model;
}

const CharTrigramModel& CharTrigramModel::Default() {
  static const CharTrigramModel* model = [] {
    absl::StatusOr<CharTrigramModel> m = Parse(kDefaultCharTrigrams);
    // The compiled-in table is tested (char_trigram_model_test.cc); a broken one gives the uniform
    // model rather than a crash.
    return new CharTrigramModel(m.ok() ? *std::move(m) : *Parse("aaa\t1"));
  }();
  return *model;
}

double CharTrigramModel::BitsPerChar(std::string_view word) const {
  int a = 0, b = 0, n = 0;
  double bits = 0;
  for (char ch : word) {
    const int c = OutcomeIndex(ch);
    if (c < 0 || c == 26) continue;
    bits += bits_[a * kContexts + b][c];
    a = b;
    b = c + 1;
    ++n;
  }
  if (n == 0) return 0;
  bits += bits_[a * kContexts + b][26];
  return bits / (n + 1);
}

}  // namespace bulwark
