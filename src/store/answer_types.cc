// Question-type cues of the lexical index (see answer_types.h).
#include "store/answer_types.h"

#include <absl/strings/ascii.h>

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "detect/slot_extractor.h"

namespace bulwark {
namespace {

// How many words from the start of a question its interrogative may be ("And when is ...",
// "So, what time do ...").
constexpr size_t kLeadingWords = 4;
// Words read from a question at most (the interrogative and the word it governs).
constexpr size_t kMaxWords = kLeadingWords + 3;

// The first kMaxWords ASCII words of `text`, lowercased ("what's" -> "what", "s").
std::vector<std::string> LeadingWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (size_t i = 0; i <= text.size() && words.size() < kMaxWords; ++i) {
    const unsigned char c = i < text.size() ? static_cast<unsigned char>(text[i]) : ' ';
    if (absl::ascii_isalpha(c)) {
      word.push_back(absl::ascii_tolower(c));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  return words;
}

bool OneOf(std::string_view word, std::initializer_list<std::string_view> set) {
  for (std::string_view s : set) {
    if (word == s) return true;
  }
  return false;
}

// The types asked for by "what/which <noun>": the noun after the interrogative, past a
// contraction's "s" and a copula or article ("what's the date", "which days").
uint32_t WhatTypes(const std::vector<std::string>& words, size_t next) {
  while (next < words.size() && OneOf(words[next], {"s", "is", "are", "was", "the"})) ++next;
  if (next >= words.size()) return 0;
  const std::string& noun = words[next];
  if (OneOf(noun, {"time", "hour", "hours"})) return kAnswerTime;
  if (OneOf(noun, {"day", "days", "date", "dates", "month", "months", "year", "weekday", "weekdays", "night",
                   "nights"})) {
    return kAnswerDate;
  }
  return 0;
}

uint32_t HowTypes(const std::vector<std::string>& words, size_t next) {
  if (next >= words.size()) return 0;
  const std::string& word = words[next];
  if (word == "much") return kAnswerAmount;
  if (OneOf(word, {"many", "long", "old", "far", "tall", "big"})) return kAnswerNumber;
  if (OneOf(word, {"early", "late"})) return kAnswerTime;
  return 0;
}

}  // namespace

uint32_t QuestionAnswerTypes(std::string_view question) {
  const std::vector<std::string> words = LeadingWords(question);
  for (size_t i = 0; i < words.size() && i < kLeadingWords; ++i) {
    const std::string& w = words[i];
    if (w == "when") return kAnswerDate | kAnswerTime;
    if (OneOf(w, {"who", "whom", "whose", "where"})) return kAnswerName;
    if (w == "how") return HowTypes(words, i + 1);
    if (w == "what" || w == "which") return WhatTypes(words, i + 1);
  }
  return 0;
}

uint32_t TextAnswerTypes(std::string_view text) {
  uint32_t types = 0;
  for (const Slot& slot : ExtractSlots(text).slots) {
    switch (slot.kind) {
      case SlotKind::kTime:
        types |= kAnswerTime;
        break;
      case SlotKind::kDate:
        types |= kAnswerDate;
        break;
      case SlotKind::kAmount:
        types |= kAnswerAmount;
        break;
      case SlotKind::kNumber:
        types |= kAnswerNumber;
        break;
      case SlotKind::kName:
        types |= kAnswerName;
        break;
      default:
        break;  // email, url, phone, account: no question type asks for them
    }
  }
  return types;
}

std::vector<std::string> AnswerTypeTerms(uint32_t types) {
  static constexpr std::array<std::string_view, 5> kTerms = {"#time", "#date", "#amount", "#number", "#name"};
  std::vector<std::string> terms;
  for (size_t bit = 0; bit < kTerms.size(); ++bit) {
    if (types & (1u << bit)) terms.emplace_back(kTerms[bit]);
  }
  return terms;
}

}  // namespace bulwark
