#include "eval/experiments/injection_eval.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <chrono>

#include "core/status_macros.h"
#include "eval/report.h"

namespace bulwark::eval {
namespace {

using Json = nlohmann::json;

absl::Status CaseLineError(size_t line, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("line ", line, ": ", std::string(what)));
}

// The optional string field `key` of `j` into `out`; InvalidArgument if present and not a string.
absl::Status OptionalCaseString(const Json& j, const char* key, size_t line, std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_string()) return CaseLineError(line, absl::StrCat("\"", key, "\" must be a string"));
  *out = it->get<std::string>();
  return absl::OkStatus();
}

// "train: vector web_page (channel ...)" -> "web_page".
std::string ChannelOfNote(const std::string& split_note) {
  const size_t at = split_note.find("vector ");
  if (at == std::string::npos) return "";
  const size_t start = at + 7;
  const size_t end = split_note.find_first_of(" (", start);
  return split_note.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

absl::StatusOr<InjectionCase> ParseInjectionCase(const Json& j, size_t line, std::optional<bool> file_label) {
  if (!j.is_object()) return CaseLineError(line, "not a JSON object");
  InjectionCase c;
  auto text = j.find("text");
  if (text == j.end() || !text->is_string()) return CaseLineError(line, "missing string \"text\"");
  c.text = text->get<std::string>();
  std::string label;
  BULWARK_RETURN_IF_ERROR(OptionalCaseString(j, "label", line, &label));
  if (label.empty()) {
    if (!file_label) return CaseLineError(line, "no \"label\" and no label given for the file");
    c.injection = *file_label;
  } else if (label == "injection" || label == "benign") {
    c.injection = label == "injection";
  } else {
    return CaseLineError(line, "\"label\" must be \"injection\" or \"benign\"");
  }
  BULWARK_RETURN_IF_ERROR(OptionalCaseString(j, "category", line, &c.category));
  BULWARK_RETURN_IF_ERROR(OptionalCaseString(j, "form", line, &c.form));
  BULWARK_RETURN_IF_ERROR(OptionalCaseString(j, "style", line, &c.group));
  if (c.group.empty()) {
    std::string note;
    BULWARK_RETURN_IF_ERROR(OptionalCaseString(j, "split_note", line, &note));
    c.group = ChannelOfNote(note);
  }
  if (auto meta = j.find("metadata"); c.group.empty() && meta != j.end() && meta->is_object()) {
    BULWARK_RETURN_IF_ERROR(OptionalCaseString(*meta, "kind", line, &c.group));
  }
  if (!c.injection) c.category.clear();
  return c;
}

std::string InjectionRateCell(const Rate& r) {
  if (r.trials == 0) return "-";
  return absl::StrCat(r.successes, "/", r.trials, " = ", FormatWithInterval(r.value(), r.ci()));
}

Json InjectionRatesJson(const std::map<std::string, Rate>& rates) {
  Json out = Json::object();
  for (const auto& [key, rate] : rates) out[key.empty() ? "(none)" : key] = ToJson(rate);
  return out;
}

void InjectionRateTable(std::string* out, const std::string& title, const std::string& what,
                        const std::map<std::string, Rate>& rates) {
  if (rates.empty()) return;
  MarkdownTable table({title, what});
  for (const auto& [key, rate] : rates) table.AddRow({key.empty() ? "(none)" : key, InjectionRateCell(rate)});
  absl::StrAppend(out, table.Render(), "\n");
}

void InjectionExampleList(std::string* out, const std::string& title,
                          const std::vector<InjectionMiss>& examples) {
  if (examples.empty()) return;
  absl::StrAppend(out, title, "\n\n");
  for (const InjectionMiss& m : examples) {
    std::string text = m.text.substr(0, 160);
    for (char& c : text) c = (c == '\n' || c == '\r') ? ' ' : c;
    absl::StrAppend(out, "- ", m.category.empty() ? "" : absl::StrCat("[", m.category, "] "),
                    m.rules.empty() ? "" : absl::StrCat("(", absl::StrJoin(m.rules, ", "), ") "), text, "\n");
  }
  absl::StrAppend(out, "\n");
}

}  // namespace

absl::StatusOr<std::vector<InjectionCase>> ParseInjectionSet(std::istream& in, std::optional<bool> file_label,
                                                             const InjectionSetLimits& limits) {
  std::vector<InjectionCase> cases;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.size() > limits.max_line_bytes)
      return CaseLineError(number, absl::StrCat("longer than ", limits.max_line_bytes, " bytes"));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (cases.size() >= limits.max_cases)
      return absl::InvalidArgumentError(absl::StrCat("more than ", limits.max_cases, " cases"));
    const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return CaseLineError(number, "not valid JSON");
    BULWARK_ASSIGN_OR_RETURN(InjectionCase c, ParseInjectionCase(j, number, file_label));
    cases.push_back(std::move(c));
  }
  if (cases.empty()) return absl::InvalidArgumentError("the set has no case");
  return cases;
}

InjectionEvalResult RunInjectionEval(const ValidationRules& rules, const std::vector<InjectionCase>& cases,
                                     std::string name, size_t max_examples) {
  InjectionEvalResult r;
  r.name = std::move(name);
  absl::flat_hash_set<std::string> rule_categories;
  for (const ValidationRule& rule : rules.rules()) rule_categories.insert(rule.category);
  absl::InlinedVector<uint32_t, 4> hits;
  double seconds = 0;
  for (const InjectionCase& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    rules.Match(c.text, &hits);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const bool flagged = !hits.empty();
    std::vector<std::string> fired, names;
    for (uint32_t i : hits) {
      const ValidationRule& rule = rules.rules()[i];
      if (std::find(fired.begin(), fired.end(), rule.category) == fired.end()) fired.push_back(rule.category);
      names.push_back(absl::StrCat(rule.category, "/", rule.name));
    }
    auto& by_detected = c.injection ? r.detected_category_injections : r.detected_category_benign;
    for (const std::string& category : fired) ++by_detected[category];
    if (c.injection) {
      r.tpr.Add(flagged);
      r.tpr_by_category[c.category].Add(flagged);
      if (!c.form.empty()) r.tpr_by_form[c.form].Add(flagged);
      r.tpr_by_group[c.group].Add(flagged);
      if (rule_categories.contains(c.category))
        r.category_agreement.Add(std::find(fired.begin(), fired.end(), c.category) != fired.end());
      if (!flagged && r.misses.size() < max_examples) r.misses.push_back({c.text, c.category, {}});
    } else {
      r.fpr.Add(flagged);
      r.fpr_by_group[c.group].Add(flagged);
      if (flagged && r.false_positives.size() < max_examples)
        r.false_positives.push_back({c.text, "", std::move(names)});
    }
  }
  r.micros_per_write = cases.empty() ? 0 : seconds * 1e6 / static_cast<double>(cases.size());
  const auto warm_start = std::chrono::steady_clock::now();
  for (const InjectionCase& c : cases) rules.Match(c.text, &hits);
  const double warm = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
  r.micros_per_write_warm = cases.empty() ? 0 : warm * 1e6 / static_cast<double>(cases.size());
  return r;
}

std::string ToMarkdown(const std::vector<InjectionEvalResult>& results) {
  std::string out = "## Injection grammar (validation alone)\n\n";
  MarkdownTable summary({"set", "TPR (injections flagged)", "FPR (benign flagged)", "category agreement",
                         "us/write (cold)", "us/write (warm)"});
  for (const InjectionEvalResult& r : results) {
    summary.AddRow({r.name, InjectionRateCell(r.tpr), InjectionRateCell(r.fpr),
                    InjectionRateCell(r.category_agreement), FormatNumber(r.micros_per_write, 1),
                    FormatNumber(r.micros_per_write_warm, 1)});
  }
  absl::StrAppend(&out, summary.Render(), "\n");
  for (const InjectionEvalResult& r : results) {
    absl::StrAppend(&out, "### ", r.name, "\n\n");
    InjectionRateTable(&out, "labelled category", "TPR", r.tpr_by_category);
    InjectionRateTable(&out, "form", "TPR", r.tpr_by_form);
    InjectionRateTable(&out, "channel / group (injections)", "TPR", r.tpr_by_group);
    InjectionRateTable(&out, "style / group (benign)", "FPR", r.fpr_by_group);
    MarkdownTable fired({"rule category fired", "injections", "benign"});
    std::map<std::string, int> keys;
    for (const auto& [k, v] : r.detected_category_injections) keys[k] = 1;
    for (const auto& [k, v] : r.detected_category_benign) keys[k] = 1;
    for (const auto& entry : keys) {
      const std::string& category = entry.first;  // a named copy: clang 14 cannot capture bindings
      auto count = [&](const std::map<std::string, int64_t>& m) {
        auto it = m.find(category);
        return absl::StrCat(it == m.end() ? 0 : it->second);
      };
      fired.AddRow({category, count(r.detected_category_injections), count(r.detected_category_benign)});
    }
    if (fired.rows() > 0) absl::StrAppend(&out, fired.Render(), "\n");
    InjectionExampleList(&out, "Missed injections (first ones):", r.misses);
    InjectionExampleList(&out, "False positives (first ones):", r.false_positives);
  }
  return out;
}

Json ToJson(const InjectionEvalResult& r) {
  auto examples = [](const std::vector<InjectionMiss>& list) {
    Json out = Json::array();
    for (const InjectionMiss& m : list)
      out.push_back({{"text", m.text}, {"category", m.category}, {"rules", m.rules}});
    return out;
  };
  return {{"name", r.name},
          {"tpr", ToJson(r.tpr)},
          {"fpr", ToJson(r.fpr)},
          {"category_agreement", ToJson(r.category_agreement)},
          {"tpr_by_category", InjectionRatesJson(r.tpr_by_category)},
          {"tpr_by_form", InjectionRatesJson(r.tpr_by_form)},
          {"tpr_by_group", InjectionRatesJson(r.tpr_by_group)},
          {"fpr_by_group", InjectionRatesJson(r.fpr_by_group)},
          {"detected_category_injections", r.detected_category_injections},
          {"detected_category_benign", r.detected_category_benign},
          {"misses", examples(r.misses)},
          {"false_positives", examples(r.false_positives)},
          {"micros_per_write", r.micros_per_write},
          {"micros_per_write_warm", r.micros_per_write_warm}};
}

}  // namespace bulwark::eval
