#include "detect/rule_atoms.h"

#include <absl/strings/ascii.h>

#include <cstdlib>
#include <optional>

namespace bulwark {
namespace {

// Length of the escape at p[i] == '\\' (\x{FEFF}, \p{Greek}, \pL, \xFF, \b, \.); 0 if unsupported.
size_t EscapeLength(std::string_view p, size_t i) {
  if (i + 1 >= p.size()) return 0;
  const char e = p[i + 1];
  if (e == 'Q' || e == 'E') return 0;
  if ((e == 'x' || e == 'p' || e == 'P') && i + 2 < p.size() && p[i + 2] == '{') {
    const size_t close = p.find('}', i + 2);
    return close == std::string_view::npos ? 0 : close + 1 - i;
  }
  if (e == 'p' || e == 'P') return i + 2 < p.size() ? 3 : 0;
  if (e == 'x') return i + 3 < p.size() ? 4 : 0;
  return 2;
}

// Length of the character class at p[i] == '['; 0 if it does not close.
size_t ClassLength(std::string_view p, size_t i) {
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^') ++j;
  if (j < p.size() && p[j] == ']') ++j;  // a leading ']' is a literal
  while (j < p.size()) {
    if (p[j] == '\\') {
      const size_t len = EscapeLength(p, j);
      if (len == 0) return 0;
      j += len;
    } else if (p[j] == '[' && j + 1 < p.size() && p[j + 1] == ':') {
      const size_t close = p.find(":]", j + 2);
      if (close == std::string_view::npos) return 0;
      j = close + 2;
    } else if (p[j] == ']') {
      return j + 1 - i;
    } else {
      ++j;
    }
  }
  return 0;
}

size_t AtomLength(std::string_view p, size_t i);

// Length of the quantifier at p[i] (*, +, ?, {n}, {n,}, {n,m}, each maybe followed by '?'); 0 if none.
size_t QuantifierLength(std::string_view p, size_t i) {
  if (i >= p.size()) return 0;
  size_t j = i;
  if (p[j] == '*' || p[j] == '+' || p[j] == '?') {
    ++j;
  } else if (p[j] == '{') {
    ++j;
    const size_t digits = j;
    while (j < p.size() && absl::ascii_isdigit(p[j])) ++j;
    if (j == digits) return 0;
    if (j < p.size() && p[j] == ',') {
      ++j;
      while (j < p.size() && absl::ascii_isdigit(p[j])) ++j;
    }
    if (j >= p.size() || p[j] != '}') return 0;
    ++j;
  } else {
    return 0;
  }
  if (j < p.size() && p[j] == '?') ++j;
  return j - i;
}

// Length of the group at p[i] == '('; 0 if it does not close.
size_t GroupLength(std::string_view p, size_t i) {
  size_t j = i + 1;
  while (j < p.size() && p[j] != ')') {
    if (p[j] == '|') {
      ++j;
      continue;
    }
    const size_t len = AtomLength(p, j);
    if (len == 0) return 0;
    j += len;
    j += QuantifierLength(p, j);
  }
  return j < p.size() ? j + 1 - i : 0;
}

// Length of the atom (escape, class, group or one byte) at p[i]; 0 if malformed or unsupported.
size_t AtomLength(std::string_view p, size_t i) {
  switch (p[i]) {
    case '\\':
      return EscapeLength(p, i);
    case '[':
      return ClassLength(p, i);
    case '(':
      return GroupLength(p, i);
    case ')':
      return 0;
    default:
      return 1;
  }
}

// Whether quantifier `q` repeats without bound or up to >= kMinGapRepeat times.
bool IsLongRepeat(std::string_view q) {
  if (q.empty() || q[0] == '?') return false;
  if (q[0] == '*' || q[0] == '+') return true;
  const size_t comma = q.find(',');
  if (comma == std::string_view::npos) return false;
  if (comma + 1 < q.size() && q[comma + 1] == '}') return true;  // {n,}
  return std::atoi(std::string(q.substr(comma + 1)).c_str()) >= kMinGapRepeat;
}

// Whether quantifier `q` allows two or more repetitions.
bool RepeatsMore(std::string_view q) {
  if (q.empty() || q[0] == '?') return false;
  if (q[0] == '*' || q[0] == '+') return true;
  const size_t comma = q.find(',');
  if (comma == std::string_view::npos) return std::atoi(std::string(q.substr(1)).c_str()) >= 2;
  if (comma + 1 < q.size() && q[comma + 1] == '}') return true;  // {n,}
  return std::atoi(std::string(q.substr(comma + 1)).c_str()) >= 2;
}

// Whether `atom` can match arbitrary letters or digits (\w, \S, \d, a negated or a letter/digit
// range class): repeated, it runs alongside every dictionary word of the other atoms.
bool MatchesAnyWord(std::string_view atom) {
  for (std::string_view wild : {"\\w", "\\S", "\\d", "[^", "a-z", "A-Z", "0-9"}) {
    if (atom.find(wild) != std::string_view::npos) return true;
  }
  return false;
}

constexpr size_t kMaxVariants = 32;

struct GapItem {
  std::string_view text;
  bool gap = false;
};
using GapItems = std::vector<GapItem>;

// The alternatives of `p` as item lists. An unquantified or optional (`?`) `(?:...)` group that
// holds a gap is distributed over the alternative it stands in (P(?:A|B)Q is PAQ|PBQ; P(?:A)?Q is
// PQ|PAQ) while an alternative has at most kMaxVariants variants; past that it is one gap.
// nullopt if `p` is not followed.
std::optional<std::vector<GapItems>> ParseGapItems(std::string_view p, int depth) {
  if (depth > 32) return std::nullopt;
  std::vector<GapItems> done;
  std::vector<GapItems> current(1);  // the variants of the alternative being read
  size_t i = 0;
  while (i < p.size()) {
    if (p[i] == '|') {
      done.insert(done.end(), current.begin(), current.end());
      current.assign(1, {});
      ++i;
      continue;
    }
    const size_t atom = AtomLength(p, i);
    if (atom == 0) return std::nullopt;
    const std::string_view quantifier = p.substr(i + atom, QuantifierLength(p, i + atom));
    const std::string_view text = p.substr(i, atom + quantifier.size());
    i += text.size();
    // A flag group such as (?-i:...) stays whole; a bare (?i) changes what follows: give up.
    if (text.substr(0, 2) == "(?" && text.substr(0, 3) != "(?:" && text.substr(0, 3) != "(?P" &&
        text.find(':') == std::string_view::npos)
      return std::nullopt;
    // A gap: a sentence-long negated class, or a repeated word wildcard ((?:\w+\s+){0,3}, \S+).
    bool gap = (text[0] == '[' && atom > 2 && text[1] == '^' && IsLongRepeat(quantifier)) ||
               (RepeatsMore(quantifier) && MatchesAnyWord(text.substr(0, atom)));
    if (!gap && text.substr(0, 3) == "(?:") {
      auto inner = ParseGapItems(text.substr(3, atom - 4), depth + 1);
      if (!inner) return std::nullopt;
      bool inner_gap = false;
      for (const GapItems& items : *inner) {
        for (const GapItem& item : items) inner_gap |= item.gap;
      }
      if (inner_gap && (quantifier.empty() || quantifier == "?")) {
        if (quantifier == "?") inner->emplace_back();
        if (current.size() * inner->size() <= kMaxVariants) {
          std::vector<GapItems> product;
          for (const GapItems& head : current) {
            for (const GapItems& tail : *inner) {
              product.push_back(head);
              product.back().insert(product.back().end(), tail.begin(), tail.end());
            }
          }
          current = std::move(product);
          continue;
        }
      }
      gap = inner_gap;  // a gap inside a repeated group, or too many variants: the group is one
    }
    for (GapItems& variant : current) variant.push_back({text, gap});
  }
  done.insert(done.end(), current.begin(), current.end());
  return done;
}

}  // namespace

RuleAtoms SplitAtGaps(std::string_view pattern) {
  RuleAtoms whole;
  whole.alternatives.push_back({{std::string(pattern)}, false, std::string(pattern)});
  const auto parsed = ParseGapItems(pattern, 0);
  if (!parsed) return whole;
  RuleAtoms out;
  bool any_gap = false;
  for (const GapItems& items : *parsed) {
    RuleAlternative alternative;
    std::string atom;
    for (const GapItem& item : items) {
      alternative.text.append(item.text);
      if (!item.gap) {
        atom.append(item.text);
        continue;
      }
      alternative.has_gap = true;
      if (!atom.empty()) alternative.atoms.push_back(std::move(atom));
      atom.clear();
    }
    if (!atom.empty()) alternative.atoms.push_back(std::move(atom));
    if (alternative.text.empty()) return whole;  // an empty alternative matches everywhere
    // An alternative of gaps only is its own single atom, whole.
    if (alternative.atoms.empty()) alternative = {{alternative.text}, false, alternative.text};
    any_gap |= alternative.has_gap;
    out.alternatives.push_back(std::move(alternative));
  }
  return any_gap ? out : whole;
}

}  // namespace bulwark
