// Answer types: question-type cues for the lexical index (issue #19 point 4). A question asks for
// a kind of fact ("When is my checkup?" a date or time, "How much is the rent?" an amount, "Who
// is my boss?" a name); a memory states kinds of facts (the slots of detect/slot_extractor.h, the
// conflict detector's extractor: times, dates incl. weekday and month names, amounts, numbers,
// capitalised names and places). Matching the two is the answer-type step of classic question
// answering (Li & Roth 2002, "Learning Question Classifiers", COLING; Prager et al. 2000,
// "Question-answering by predictive annotation", SIGIR: the index holds a term per answer type
// found in a passage and the query asks for the term of its question's type).
//
// With HybridOptions::answer_types the store's lexical index (store/lexical_terms.h) holds one
// term per slot kind a memory has ("#date", "#time", "#amount", "#number", "#name"; no tokenizer
// word contains '#'), and a question asks for its type's terms with weight answer_type_weight.
// BM25's IDF discounts a type most memories carry, so the cue mostly separates, among memories
// that share the question's words, those that state the kind of fact asked for. Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bulwark {

// Bits of an answer-type set.
enum AnswerType : uint32_t {
  kAnswerTime = 1u << 0,    // a clock time: "9:30 am", "noon"
  kAnswerDate = 1u << 1,    // a date, a weekday or a month: "June 6", "tuesdays", "March"
  kAnswerAmount = 1u << 2,  // money or a percentage: "$1,850", "15 %"
  kAnswerNumber = 1u << 3,  // a number, with or without a unit: "45 minutes", "3"
  kAnswerName = 1u << 4,    // a capitalised name or place: "Priscilla Huang", "Port Townsend"
};

// The answer types a question asks for, from its leading interrogative (the first within its
// first four words): "when" -> date | time; "what/which time|hour", "how early|late" -> time;
// "what/which day|days|date|month|year|weekday" -> date; "how much" -> amount; "how many|long|old|
// far|tall|big" -> number; "who|whom|whose|where" -> name. 0 for anything else.
uint32_t QuestionAnswerTypes(std::string_view question);

// The answer types `text` states (its slots' kinds; email, url, phone and account codes count as
// none of them). 0 for a text without slots.
uint32_t TextAnswerTypes(std::string_view text);

// The index terms of `types`, in bit order ("#time", "#date", "#amount", "#number", "#name").
std::vector<std::string> AnswerTypeTerms(uint32_t types);

}  // namespace bulwark
