// A rule pattern cut at its sentence-long gaps (issue #12 point 10): the injection grammar's rules
// are written "A, later in the same sentence B" (`A[^.!?\n]*B`), and RE2's set DFA over many such
// rules has one state per combination of partly matched rules, so the first pass over text the
// process has not seen built ~one DFA state per byte (210-220 us per text). The pieces between
// the gaps ("atoms") have no gap. A rule can only match a text in which every atom of one of its
// alternatives occurs, so the atoms are a necessary condition for the rule (a two-level match:
// atoms first, the whole rule only when they all occurred; see two_level_rule_set.h).
//
// Why the condition is necessary: an atom is a run of consecutive items of one alternative's
// concatenation, so wherever the alternative matches, each atom matches the corresponding
// substring of that match. Alternatives are the pattern's top-level ones, multiplied out over the
// `(?:A|B)` and `(?:A)?` groups that hold a gap (P(?:A|B)Q matches where PAQ or PBQ does). RE2 has
// no look-around; `\b`, `^` and `$` look only at the neighbouring bytes and the ends of the text,
// which are the same when the atom is searched alone in the same text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

struct RuleAlternative {
  std::vector<std::string> atoms;  // in order; none is empty
  bool has_gap = false;            // false: the alternative is exactly its single atom
  std::string text;                // the alternative whole (its items, flattened groups unwrapped)
};

struct RuleAtoms {
  // The pattern's top-level alternatives. A pattern without any gap is one alternative, the
  // pattern itself, without gap. A pattern this parser does not follow (an unbalanced group, \Q,
  // a flag group such as (?i) outside a group) is also returned whole as one gap-free
  // alternative: always correct, only not split.
  std::vector<RuleAlternative> alternatives;
};

// A gap is a negated character class repeated without bound or up to >= kMinGapRepeat times
// (`[^.!?\n]*`, `[^!?\n]{0,80}?`, `[^>]{0,300}?`), or a repeated word wildcard (an item that can
// match letters or digits of any word, \w \S \d [^...] [a-z] [0-9], repeated: `(?:\w+\s+){0,3}?`,
// `\S+`), or a group holding a gap in one of its alternatives; at the top level of an alternative
// or inside unquantified single-alternative `(?:...)` groups there (flattened into it). A gap is
// left out of the atoms, which only weakens the necessary condition; it never changes a match.
inline constexpr int kMinGapRepeat = 16;

RuleAtoms SplitAtGaps(std::string_view pattern);

}  // namespace bulwark
