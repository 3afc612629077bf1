// The injection-grammar experiment of `bulwark-lab eval injection` (issue #14, point 1): run the
// `validation` detector's rules (detect/validation_rules.h, over normalised text) on a labelled
// set of writes and report the true-positive rate per injection category, form and channel, the
// false-positive rate per benign writing style, and which rule categories fired, each rate with its
// Clopper-Pearson interval (eval/rates.h). Validation alone: no store, no other detector.
//
// Input: JSONL, one object per line with a string "text" and
//   - "label": "injection" or "benign" (data/injection/*.jsonl), or no label and a label given
//     for the whole file (data/heldout_corpus/*_poisons.jsonl as injections, *_memories.jsonl as
//     benign: validation alone sees every poison, including those no text rule can catch);
//   - optional "category" and "form" (injections), and a group: "style", else the channel named
//     in "split_note" ("... vector web_page ..."), else "metadata"."kind".
//
// Evaluation-only code: linked by bulwark-lab, never by the product binary.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "detect/validation_rules.h"
#include "eval/rates.h"

namespace bulwark::eval {

struct InjectionCase {
  std::string text;
  bool injection = false;
  std::string category;  // the labelled category ("" for benign writes)
  std::string form;      // the labelled surface form ("" when none)
  std::string group;     // channel (injections) or style (benign); "" when none
};

struct InjectionSetLimits {
  size_t max_line_bytes = 1 << 20;
  size_t max_cases = 100'000;
};

// Parses a JSONL set. `file_label`: the label of lines without "label" (nullopt: such a line is an
// error). Blank lines are skipped. InvalidArgument naming the line for a line that is not a JSON
// object, a missing or non-string "text", a "label" other than "injection"/"benign", a non-string
// "category", "form" or "style", a line over the limit, more cases than the limit, or no case.
[[nodiscard]] absl::StatusOr<std::vector<InjectionCase>> ParseInjectionSet(
    std::istream& in, std::optional<bool> file_label, const InjectionSetLimits& limits = {});

struct InjectionMiss {
  std::string text;
  std::string category;            // labelled
  std::vector<std::string> rules;  // "category/rule" that matched (false positives only)
};

struct InjectionEvalResult {
  std::string name;  // the input's name (a file path)
  Rate tpr, fpr;     // over all injections / all benign writes (empty when there are none)
  std::map<std::string, Rate> tpr_by_category, tpr_by_form, tpr_by_group, fpr_by_group;
  // Writes on which a rule of this (detected) category fired, among injections and benign writes.
  std::map<std::string, int64_t> detected_category_injections, detected_category_benign;
  // Injections whose labelled category is one of the categories that fired (labels that are rule
  // categories only).
  Rate category_agreement;
  std::vector<InjectionMiss> misses, false_positives;  // each capped at max_examples
  double micros_per_write = 0;       // mean normalise + match time, first pass (RE2's lazy DFAs cold)
  double micros_per_write_warm = 0;  // the same over a second pass (DFA states cached)
};

// Matches every case against `rules` and counts. Keeps at most `max_examples` misses and false
// positives (in input order).
InjectionEvalResult RunInjectionEval(const ValidationRules& rules, const std::vector<InjectionCase>& cases,
                                     std::string name, size_t max_examples = 20);

// Markdown: a summary table (one row per result, side by side), then per result the categories,
// forms, groups, the rule categories that fired, and the kept misses and false positives.
std::string ToMarkdown(const std::vector<InjectionEvalResult>& results);
nlohmann::json ToJson(const InjectionEvalResult& result);

}  // namespace bulwark::eval
