// The auto-storing agent under MINJA / InjecMEM attack.
#include "attack/auto_storing_agent.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/ascii.h>

#include "core/status_macros.h"

namespace bulwark::attack {
namespace {

constexpr std::string_view kQuestionLabel = "Question: ";
constexpr std::string_view kReasoningLabel = "\nReasoning: ";

std::string Trim(std::string_view s) {
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && absl::ascii_isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Fraction of the words of `part` that occur in `whole`.
double TokenCoverage(std::string_view part, std::string_view whole) {
  const std::vector<std::string_view> words = SplitWords(part);
  const std::vector<std::string_view> have = SplitWords(whole);
  const absl::flat_hash_set<std::string_view> set(have.begin(), have.end());
  if (words.empty()) return 0;
  size_t found = 0;
  for (std::string_view w : words) found += set.contains(w);
  return found / static_cast<double>(words.size());
}

}  // namespace

absl::StatusOr<std::vector<SearchHit>> StoreAgentMemory::Search(std::string_view query, int k) {
  BULWARK_ASSIGN_OR_RETURN(auto result, store_->Search(name_space_, query, {.k = k}));
  return std::move(result.hits);
}

absl::StatusOr<Entry> StoreAgentMemory::Add(const NewEntry& record) {
  return store_->Add(name_space_, record, principal_);
}

std::pair<std::string, std::string> AutoStoringAgent::SplitQuestion(std::string_view query) {
  for (size_t i = 0; i < query.size(); ++i) {
    const char c = query[i];
    const bool end = c == '?' || ((c == '.' || c == '!') && (i + 1 == query.size() || query[i + 1] == ' '));
    if (end) return {Trim(query.substr(0, i + 1)), Trim(query.substr(i + 1))};
  }
  return {Trim(query), ""};
}

std::string AutoStoringAgent::ReasoningOf(std::string_view text) {
  if (text.substr(0, kQuestionLabel.size()) != kQuestionLabel) return "";
  const size_t at = text.find(kReasoningLabel);
  if (at == std::string_view::npos) return "";
  return std::string(text.substr(at + kReasoningLabel.size()));
}

absl::StatusOr<Interaction> AutoStoringAgent::Handle(std::string_view query, std::string_view session) {
  Interaction out;
  out.query = std::string(query);
  std::tie(out.question, out.guidance) = SplitQuestion(query);
  auto retrieved = memory_->Search(query, k_);
  BULWARK_RETURN_IF_ERROR(retrieved.status());
  std::string demonstrated, best_memory;
  for (const SearchHit& hit : *retrieved) {
    out.retrieved_ids.push_back(hit.entry.id);
    // The reasoning as recorded (metadata survives watermark marking of the text), else parsed.
    const auto recorded = hit.entry.metadata.find("reasoning");
    const std::string reasoning = recorded != hit.entry.metadata.end() && recorded->is_string()
                                      ? recorded->get<std::string>()
                                      : ReasoningOf(hit.entry.text);
    if (demonstrated.empty()) demonstrated = reasoning;
    if (best_memory.empty() && reasoning.empty()) best_memory = hit.entry.text;
  }
  if (!out.guidance.empty()) {
    // A partial instruction that a retrieved demonstration completes is followed as demonstrated.
    out.reasoning = !demonstrated.empty() && TokenCoverage(out.guidance, demonstrated) >= 0.5 ? demonstrated
                                                                                              : out.guidance;
  } else if (!demonstrated.empty()) {
    out.reasoning = demonstrated;
  } else if (!best_memory.empty()) {
    out.reasoning = "From memory: " + best_memory;
  } else {
    out.reasoning = "No relevant memory.";
  }
  NewEntry record;
  record.text = std::string(kQuestionLabel) + out.query + std::string(kReasoningLabel) + out.reasoning;
  if (marker_) record.text = marker_(record.text);
  record.metadata = {
      {"kind", "interaction"}, {"session", std::string(session)}, {"reasoning", out.reasoning}};
  record.source = Source::kAgent;
  BULWARK_ASSIGN_OR_RETURN(auto stored, memory_->Add(record));
  out.record = std::move(stored);
  return out;
}

}  // namespace bulwark::attack
