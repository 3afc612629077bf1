#include "detect/validation_rules.h"

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_split.h>
#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/status_macros.h"
#include "core/strings.h"
#include "detect/validation_rules_data.h"

namespace bulwark {
namespace {

RE2::Options RuleOptions() {
  RE2::Options options;
  options.set_case_sensitive(false);
  options.set_log_errors(false);
  options.set_max_mem(64 << 20);  // each set's DFA: the bounded repetitions make it large
  return options;
}

absl::Status LineError(int line_number, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("validation rules line ", line_number, ": ", what));
}

bool IsMacroChar(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Replaces every {NAME} of `pattern` by "(?:" + macros[NAME] + ")". A '{' after a backslash or
// not followed by [A-Z][A-Z0-9_]*} is left alone (RE2's own repetition braces hold digits).
absl::StatusOr<std::string> Expand(std::string_view pattern,
                                   const absl::flat_hash_map<std::string, std::string>& macros) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out.push_back(c);
      out.push_back(pattern[++i]);
      // \x{FEFF}, \p{Greek}, \P{L}: the braces belong to the escape.
      const char e = pattern[i];
      if ((e == 'x' || e == 'p' || e == 'P') && i + 1 < pattern.size() && pattern[i + 1] == '{') {
        while (++i < pattern.size() && pattern[i] != '}') out.push_back(pattern[i]);
        if (i < pattern.size()) out.push_back('}');
      }
      continue;
    }
    size_t end = i + 1;
    if (c == '{' && end < pattern.size() && pattern[end] >= 'A' && pattern[end] <= 'Z') {
      while (end < pattern.size() && IsMacroChar(pattern[end])) ++end;
      if (end < pattern.size() && pattern[end] == '}') {
        const std::string name(pattern.substr(i + 1, end - i - 1));
        auto it = macros.find(name);
        if (it == macros.end()) return absl::InvalidArgumentError(absl::StrCat("unknown macro {", name, "}"));
        absl::StrAppend(&out, "(?:", it->second, ")");
        if (out.size() > ValidationRules::kMaxPatternBytes)
          return absl::InvalidArgumentError("pattern longer than kMaxPatternBytes after expansion");
        i = end;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

// The built-in hidden_text rules fed by the normaliser, in this order (see AddSignalRules).
constexpr const char* kSignalNames[] = {"zero_width_chars", "bidi_controls", "tag_characters",
                                        "mixed_script_word"};

}  // namespace

ValidationRules::ValidationRules() = default;
ValidationRules::~ValidationRules() = default;

absl::Status ValidationRules::AddRule(ValidationRule rule, int line_number) {
  TwoLevelRuleSet& set = rule.view == RuleView::kRaw ? *raw_set_ : *norm_set_;
  const absl::Status added = set.Add(rule.pattern);
  if (!added.ok())
    return LineError(line_number, absl::StrCat("(", rule.name, ") bad pattern: ", added.message()));
  (rule.view == RuleView::kRaw ? raw_ids_ : norm_ids_).push_back(static_cast<uint32_t>(rules_.size()));
  rules_.push_back(std::move(rule));
  return absl::OkStatus();
}

void ValidationRules::AddSignalRules() {
  first_signal_ = static_cast<uint32_t>(rules_.size());
  for (const char* name : kSignalNames) rules_.push_back({"hidden_text", name, "", RuleView::kSignal});
}

absl::Status ValidationRules::Compile() {
  if (rules_.empty()) return absl::InvalidArgumentError("validation rules: no rule");
  if (!norm_set_->Compile().ok() || !raw_set_->Compile().ok())
    return absl::ResourceExhaustedError("validation rules: RE2 set does not compile");
  AddSignalRules();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ValidationRules>> ValidationRules::Parse(std::string_view tsv) {
  std::unique_ptr<ValidationRules> rules(new ValidationRules());
  rules->norm_set_ = std::make_unique<TwoLevelRuleSet>(RuleOptions());
  rules->raw_set_ = std::make_unique<TwoLevelRuleSet>(RuleOptions());
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_map<std::string, std::string> macros;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(ToAbsl(tsv), '\n')) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    if (fields.size() < 3 || fields.size() > 4 ||
        std::any_of(fields.begin(), fields.end(), [](const std::string& f) { return f.empty(); })) {
      return LineError(line_number,
                       "expected category<TAB>name<TAB>[raw<TAB>]pattern or @define<TAB>NAME<TAB>fragment");
    }
    auto expanded = Expand(fields.back(), macros);
    if (!expanded.ok()) return LineError(line_number, expanded.status().message());
    if (fields[0] == "@define") {
      if (fields.size() != 3 || !(fields[1][0] >= 'A' && fields[1][0] <= 'Z') ||
          !std::all_of(fields[1].begin(), fields[1].end(), IsMacroChar)) {
        return LineError(line_number, "expected @define<TAB>NAME<TAB>fragment with NAME in [A-Z][A-Z0-9_]*");
      }
      if (!RE2(*expanded, RuleOptions()).ok())
        return LineError(line_number, "macro is not a valid RE2 fragment");
      if (!macros.emplace(fields[1], *std::move(expanded)).second)
        return LineError(line_number, absl::StrCat("duplicate macro '", fields[1], "'"));
      continue;
    }
    RuleView view = RuleView::kNormalized;
    if (fields.size() == 4) {
      if (fields[2] != "raw" && fields[2] != "norm" && fields[2] != "affirmed")
        return LineError(line_number, "view must be raw, norm or affirmed");
      view = fields[2] == "raw" ? RuleView::kRaw : RuleView::kNormalized;
    }
    if (!names.insert(fields[1]).second)
      return LineError(line_number, absl::StrCat("duplicate rule name '", fields[1], "'"));
    const bool affirmed = fields.size() == 4 && fields[2] == "affirmed";
    BULWARK_RETURN_IF_ERROR(
        rules->AddRule({fields[0], fields[1], *std::move(expanded), view, affirmed}, line_number));
  }
  BULWARK_RETURN_IF_ERROR(rules->Compile());
  return rules;
}

absl::StatusOr<std::unique_ptr<ValidationRules>> ValidationRules::Default() {
  return Parse(kDefaultValidationRules);
}

absl::StatusOr<std::shared_ptr<const ValidationRules>> ValidationRules::SharedDefault() {
  static const auto* shared = new absl::StatusOr<std::shared_ptr<const ValidationRules>>(Default());
  return *shared;
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
  WithThreadNormalizedText(text, [&](const NormalizedText& normalized) { Match(text, normalized, out); });
}

void ValidationRules::MatchSet(const TwoLevelRuleSet& set, const std::vector<uint32_t>& ids,
                               std::string_view text, std::vector<uint32_t>* hits) const {
  if (ids.empty()) return;
  // If the atom set's DFA runs out of its budget on this text, every rule is a candidate, checked
  // by its own RE2: a large input is never waved through.
  TwoLevelRuleSet::Candidates candidates;
  set.FindCandidates(text, &candidates);
  for (const TwoLevelRuleSet::Candidate& c : candidates) {
    const uint32_t id = ids[c.rule];
    // An affirmed rule's own search finds its matches (none if it has none): no Verify first.
    if (rules_[id].affirmed ? HasAffirmedMatch(set.rule(c.rule), text) : set.Verify(c, text))
      hits->push_back(id);
  }
}

namespace {

// Whether the clause before `end` (back to . ! ? ; : , or a line break, at most 80 bytes) holds a
// negation word: never, not, n't, no one, nobody, under no circumstances.
bool NegatedBefore(std::string_view text, size_t end) {
  size_t start = end;
  while (start > 0 && end - start < 80 &&
         std::string_view(".!?;:,\n").find(text[start - 1]) == std::string_view::npos)
    --start;
  static const RE2 kNegation("\\b(?:never|not|no\\s+one|nobody|under\\s+no\\s+circumstances)\\b|n't\\b");
  return RE2::PartialMatch(re2::StringPiece(text.data() + start, end - start), kNegation);
}

}  // namespace

bool ValidationRules::HasAffirmedMatch(const RE2& re, std::string_view text) {
  re2::StringPiece match;
  size_t from = 0;
  // At most 8 matches are looked at (each a linear scan from where the last one ended).
  for (int tries = 0; tries < 8 && from <= text.size(); ++tries) {
    if (!re.Match(re2::StringPiece(text.data(), text.size()), from, text.size(), RE2::UNANCHORED, &match, 1))
      return false;
    const size_t start = static_cast<size_t>(match.data() - text.data());
    if (!NegatedBefore(text, start)) return true;
    from = start + std::max<size_t>(match.size(), 1);
  }
  return false;
}

void ValidationRules::Match(std::string_view raw, const NormalizedText& normalized,
                            absl::InlinedVector<uint32_t, 4>* out) const {
  out->clear();
  std::vector<uint32_t> hits;
  MatchSet(*raw_set_, raw_ids_, raw, &hits);
  MatchSet(*norm_set_, norm_ids_, normalized.folded, &hits);
  if (normalized.deobfuscated != normalized.folded)
    MatchSet(*norm_set_, norm_ids_, normalized.deobfuscated, &hits);
  const int signals[] = {normalized.zero_width, normalized.bidi_controls, normalized.tag_characters,
                         normalized.mixed_script_words};
  for (size_t i = 0; i < std::size(signals); ++i) {
    if (signals[i] > 0) hits.push_back(first_signal_ + static_cast<uint32_t>(i));
  }
  std::sort(hits.begin(), hits.end());
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
  out->assign(hits.begin(), hits.end());
}

}  // namespace bulwark
