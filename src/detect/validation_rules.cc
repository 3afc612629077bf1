#include "detect/validation_rules.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/strings.h"
#include "detect/validation_rules_data.h"

namespace bulwark {
namespace {

RE2::Options RuleOptions() {
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_max_mem(64 << 20);  // the set's DFA: the bounded repetitions make it large
  return options;
}

}  // namespace

ValidationRules::ValidationRules() = default;
ValidationRules::~ValidationRules() = default;

absl::StatusOr<std::unique_ptr<ValidationRules>> ValidationRules::Parse(std::string_view tsv) {
  std::unique_ptr<ValidationRules> rules(new ValidationRules());
  rules->set_ = std::make_unique<RE2::Set>(RuleOptions(), RE2::UNANCHORED);
  absl::flat_hash_set<std::string> names;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(ToAbsl(tsv), '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits('\t', 2));
    if (fields.size() != 3 || fields[0].empty() || fields[1].empty() || fields[2].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("validation rules line ", line_number, ": expected category<TAB>name<TAB>pattern"));
    }
    if (!names.insert(fields[1]).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("validation rules line ", line_number, ": duplicate rule name '", fields[1], "'"));
    }
    std::string error;
    if (rules->set_->Add(fields[2], &error) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("validation rules line ", line_number, " (", fields[1], "): bad pattern: ", error));
    }
    rules->rules_.push_back({fields[0], fields[1], fields[2]});
  }
  if (rules->rules_.empty()) return absl::InvalidArgumentError("validation rules: no rule");
  if (!rules->set_->Compile())
    return absl::ResourceExhaustedError("validation rules: RE2 set does not compile");
  return rules;
}

absl::StatusOr<std::unique_ptr<ValidationRules>> ValidationRules::Default() {
  return Parse(kDefaultValidationRules);
}

absl::StatusOr<std::unique_ptr<ValidationRules>> ValidationRules::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read validation rules ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto rules = Parse(buffer.str());
  if (!rules.ok())
    return absl::Status(rules.status().code(), absl::StrCat(path, ": ", rules.status().message()));
  return rules;
}

std::vector<const ValidationRule*> ValidationRules::Match(std::string_view text) const {
  absl::InlinedVector<uint32_t, 4> hits;
  Match(text, &hits);
  std::vector<const ValidationRule*> matched;
  for (uint32_t i : hits) matched.push_back(&rules_[i]);
  return matched;
}

void ValidationRules::Match(std::string_view text, absl::InlinedVector<uint32_t, 4>* out) const {
  out->clear();
  const re2::StringPiece piece(text.data(), text.size());
  if (!set_->Match(piece, nullptr)) return;
  std::vector<int> hits;
  set_->Match(piece, &hits);
  std::sort(hits.begin(), hits.end());
  for (int i : hits) out->push_back(static_cast<uint32_t>(i));
}

}  // namespace bulwark
