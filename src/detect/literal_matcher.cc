#include "detect/literal_matcher.h"

#include <deque>

namespace bulwark {

LiteralMatcher::LiteralMatcher(const std::vector<std::string>& literals) : literal_count_(literals.size()) {
  auto lower = [](unsigned char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c - 'A' + 'a') : c;
  };
  for (const std::string& literal : literals) {
    for (unsigned char c : literal) {
      if (byte_class_[lower(c)] == 0) byte_class_[lower(c)] = static_cast<uint16_t>(classes_++);
    }
  }
  for (int c = 'A'; c <= 'Z'; ++c) byte_class_[c] = byte_class_[c - 'A' + 'a'];
  const auto width = static_cast<size_t>(classes_);
  // The trie; 0 in `next_` means "no edge" until the links below fill every entry.
  next_.assign(width, 0);
  std::vector<std::vector<uint32_t>> own(1);
  for (size_t i = 0; i < literals.size(); ++i) {
    uint32_t node = 0;
    for (unsigned char c : literals[i]) {
      uint32_t& edge = next_[node * width + byte_class_[c]];
      if (edge == 0) {
        edge = static_cast<uint32_t>(own.size());
        own.emplace_back();
        next_.resize(own.size() * width, 0);
      }
      node = next_[node * width + byte_class_[c]];
    }
    own[node].push_back(static_cast<uint32_t>(i));
  }
  // Breadth first: each node's suffix link, its outputs (its own, then its link's), and the
  // missing edges taken from its link's (already complete) row.
  const size_t nodes = own.size();
  std::vector<uint32_t> link(nodes, 0), order;
  std::deque<uint32_t> queue;
  for (size_t c = 0; c < width; ++c) {
    if (next_[c] != 0) queue.push_back(next_[c]);
  }
  while (!queue.empty()) {
    const uint32_t node = queue.front();
    queue.pop_front();
    order.push_back(node);
    for (size_t c = 0; c < width; ++c) {
      uint32_t& edge = next_[node * width + c];
      if (edge != 0) {
        link[edge] = next_[link[node] * width + c];
        queue.push_back(edge);
      } else {
        edge = next_[link[node] * width + c];
      }
    }
  }
  std::vector<std::vector<uint32_t>> all(nodes);
  for (uint32_t node : order) {  // a link is nearer the root, so its list is complete first
    all[node] = own[node];
    all[node].insert(all[node].end(), all[link[node]].begin(), all[link[node]].end());
  }
  output_begin_.assign(1, 0);
  for (size_t n = 0; n < nodes; ++n) {
    outputs_.insert(outputs_.end(), all[n].begin(), all[n].end());
    output_begin_.push_back(static_cast<uint32_t>(outputs_.size()));
  }
  // Each transition as (node << 1) | (the node has literals to report): one load per byte.
  for (uint32_t& edge : next_) edge = (edge << 1) | (all[edge].empty() ? 0u : 1u);
}

void LiteralMatcher::FindAll(std::string_view text, std::vector<int>* found,
                             std::vector<uint8_t>* seen) const {
  seen->resize(literal_count_, 0);
  const size_t width = static_cast<size_t>(classes_);
  const size_t first = found->size();
  uint32_t node = 0;
  for (unsigned char c : text) {
    const uint32_t edge = next_[node * width + byte_class_[c]];
    node = edge >> 1;
    if ((edge & 1) == 0) continue;
    for (uint32_t i = output_begin_[node]; i < output_begin_[node + 1]; ++i) {
      const uint32_t literal = outputs_[i];
      if (!(*seen)[literal]) {
        (*seen)[literal] = 1;
        found->push_back(static_cast<int>(literal));
      }
    }
  }
  for (size_t i = first; i < found->size(); ++i) (*seen)[static_cast<size_t>((*found)[i])] = 0;
}

bool LiteralMatcher::ContainsAny(std::string_view text) const {
  const size_t width = static_cast<size_t>(classes_);
  uint32_t node = 0;
  for (unsigned char c : text) {
    const uint32_t edge = next_[node * width + byte_class_[c]];
    if (edge & 1) return true;
    node = edge >> 1;
  }
  return false;
}

}  // namespace bulwark
