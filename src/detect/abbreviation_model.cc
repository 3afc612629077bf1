#include "detect/abbreviation_model.h"

#include <cmath>
#include <cstdint>

#include "detect/char_trigram_model.h"
#include "detect/char_trigrams_data.h"

namespace bulwark {
namespace {

constexpr double kLambda = 0.9;

int Letter(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : -1; }

// Adds the counts of one "abc<TAB>count" line (already validated by CharTrigramModel::Parse).
void AddLine(std::string_view line, std::array<double, 26>* first,
             std::array<std::array<double, 26>, 26>* pairs) {
  const size_t tab = line.find('\t');
  if (tab != 3) return;
  uint64_t count = 0;
  for (char d : line.substr(4)) count = count * 10 + static_cast<uint64_t>(d - '0');
  const int a = Letter(line[0]), b = Letter(line[1]), c = Letter(line[2]);
  const double n = static_cast<double>(count);
  if (line[0] == '^' && line[1] == '^' && c >= 0) (*first)[c] += n;
  if (b >= 0 && c >= 0) (*pairs)[b][c] += n;  // "bc" adjacent
  if (a >= 0 && c >= 0) (*pairs)[a][c] += n;  // "a?c", one letter between
}

}  // namespace

AbbreviationModel::AbbreviationModel() {
  first_.fill(static_cast<float>(std::log2(26.0)));
  for (auto& row : next_) row.fill(static_cast<float>(std::log2(26.0)));
}

AbbreviationModel AbbreviationModel::FromTrigramTable(std::string_view tsv) {
  AbbreviationModel model;
  if (!CharTrigramModel::Parse(tsv).ok()) return model;
  std::array<double, 26> first{};
  std::array<std::array<double, 26>, 26> pairs{};
  while (!tsv.empty()) {
    const size_t eol = std::min(tsv.find('\n'), tsv.size());
    AddLine(tsv.substr(0, eol), &first, &pairs);
    tsv.remove_prefix(std::min(eol + 1, tsv.size()));
  }
  double first_total = 0;
  for (double n : first) first_total += n;
  for (int a = 0; a < 26; ++a) {
    if (first_total > 0) {
      model.first_[a] = static_cast<float>(-std::log2(kLambda * first[a] / first_total + (1 - kLambda) / 26));
    }
    double row_total = 0;
    for (double n : pairs[a]) row_total += n;
    if (row_total <= 0) continue;
    for (int b = 0; b < 26; ++b) {
      model.next_[a][b] =
          static_cast<float>(-std::log2(kLambda * pairs[a][b] / row_total + (1 - kLambda) / 26));
    }
  }
  return model;
}

const AbbreviationModel& AbbreviationModel::Default() {
  static const AbbreviationModel* model = new AbbreviationModel(FromTrigramTable(kDefaultCharTrigrams));
  return *model;
}

double AbbreviationModel::BitsPerLetter(std::string_view run) const {
  double bits = 0;
  int prev = -1, n = 0;
  for (char ch : run) {
    const int c = Letter(ch);
    if (c < 0) continue;
    bits += prev < 0 ? first_[c] : next_[prev][c];
    prev = c;
    ++n;
  }
  return n == 0 ? 0 : bits / n;
}

}  // namespace bulwark
