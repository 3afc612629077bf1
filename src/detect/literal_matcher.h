// Which of a fixed set of literal strings occur in a text, in one pass (Aho-Corasick), for the
// injection grammar's first level (issue #12 point 10): RE2's FilteredRE2 reduces each rule to
// the literal strings ("atoms") some of which every match must contain, and leaves the string
// matching to the caller. The automaton is built whole when the matcher is constructed (a dense
// transition table over the byte classes the literals use), so a text the process has not seen
// costs what a seen one does: one table lookup per byte, no lazily built DFA states.
//
// Matching is ASCII case-insensitive: A-Z read as a-z (FilteredRE2's atoms are lower-cased).
// Construction is linear in the literals' total length times the number of byte classes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

class LiteralMatcher {
 public:
  // `literals` must be non-empty strings; duplicates are allowed (each keeps its index).
  explicit LiteralMatcher(const std::vector<std::string>& literals);

  // Appends to `found` (not cleared) the index of every literal occurring in `text`, each once
  // and in no particular order; `seen` is scratch of one flag per literal, all false on entry and
  // on return.
  void FindAll(std::string_view text, std::vector<int>* found, std::vector<uint8_t>* seen) const;
  // Whether any literal occurs in `text`.
  bool ContainsAny(std::string_view text) const;

  size_t literal_count() const { return literal_count_; }
  size_t node_count() const { return output_begin_.size() - 1; }

 private:
  uint16_t byte_class_[256] = {};  // 0: a byte no literal holds (every state goes to the root)
  int classes_ = 1;
  std::vector<uint32_t>
      next_;  // node * classes_ + class -> (node << 1) | it has literals (the full automaton)
  std::vector<uint32_t> output_begin_;  // node -> its literals: outputs_[output_begin_[n], [n+1])
  std::vector<uint32_t> outputs_;       // literal indices, with those of the node's suffix links
  size_t literal_count_ = 0;
};

}  // namespace bulwark
