// The benign-session simulator (see benign_session.h).
#include "attack/extraction/benign_session.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_replace.h>

#include "attack/extraction/extraction_rng.h"
#include "attack/extraction/jsonl_reader.h"
#include "attack/extraction/text_terms.h"
#include "core/status_macros.h"

namespace bulwark::extraction {
namespace {

constexpr int kBriefingEvery = 3;  // a briefing session asks a briefing question every third turn

absl::Status ReadQueries(const std::string& path, BenignCorpus* corpus) {
  return ForEachJsonLineInFile(path, [corpus](int, const nlohmann::json& line) {
    const auto query = line.find("query");
    const auto category = line.find("category");
    if (query == line.end() || !query->is_string() || query->get_ref<const std::string&>().empty() ||
        (category != line.end() && !category->is_string())) {
      return absl::InvalidArgumentError("expected {\"query\": \"...\", \"category\": \"...\"}");
    }
    const std::string cat = category == line.end() ? "general" : category->get<std::string>();
    corpus->queries[cat].push_back(query->get<std::string>());
    return absl::OkStatus();
  });
}

absl::Status ReadMemories(const std::string& path, BenignCorpus* corpus) {
  return ForEachJsonLineInFile(path, [corpus](int, const nlohmann::json& line) {
    const auto text = line.find("text");
    if (text == line.end() || !text->is_string())
      return absl::InvalidArgumentError("expected {\"text\": \"...\"}");
    std::string category = "general";
    if (const auto meta = line.find("metadata"); meta != line.end() && meta->is_object()) {
      if (const auto c = meta->find("category"); c != meta->end() && c->is_string())
        category = c->get<std::string>();
    }
    corpus->memories[category].push_back(text->get<std::string>());
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<BenignCorpus> LoadBenignCorpus(const std::vector<std::string>& query_files,
                                              const std::string& memories_file) {
  BenignCorpus corpus;
  for (const std::string& path : query_files) {
    BULWARK_RETURN_IF_ERROR(ReadQueries(path, &corpus));
  }
  if (corpus.queries.empty()) return absl::InvalidArgumentError("benign corpus: no query");
  if (!memories_file.empty()) {
    BULWARK_RETURN_IF_ERROR(ReadMemories(memories_file, &corpus));
  }
  return corpus;
}

const std::vector<std::string>& FollowUpTemplates() {
  static const std::vector<std::string> kTemplates = {"What else do I have about {w}?",
                                                      "Tell me more about the {w}.", "Anything else on {w}?",
                                                      "Is there more about {w}?", "And what about the {w}?"};
  return kTemplates;
}

const std::vector<std::string>& BroadQuestions() {
  static const std::vector<std::string> kQuestions = {
      "What's on my plate today?", "What's on my plate this week?",
      "What do I have coming up?", "Anything I should know about today?",
      "What am I forgetting?",     "Give me a quick overview of everything.",
      "What's still pending?",     "What happened recently?"};
  return kQuestions;
}

std::string BriefingQuestion(const std::string& category) {
  static const std::map<std::string, std::string> kQuestions = {
      {"task_reminders", "Which tasks are due soon?"},
      {"calendar_events", "What's on my calendar today?"},
      {"preferences", "Remind me of my usual preferences."},
      {"factual_knowledge", "What did I learn recently?"},
      {"document_references", "Which files did I store recently?"},
      {"configuration_settings", "Did I change any device settings lately?"},
      {"conversation_history", "What did we talk about yesterday?"}};
  if (auto it = kQuestions.find(category); it != kQuestions.end()) return it->second;
  return absl::StrCat("Anything new about ", absl::StrReplaceAll(category, {{"_", " "}}), "?");
}

struct BenignSessionSimulator::State {
  std::map<std::string, std::vector<std::string>> order;  // per category: shuffled questions
  std::map<std::string, size_t> next;                     // per category: cursor into order
};

BenignSessionSimulator::BenignSessionSimulator(BenignCorpus corpus, BenignSessionOptions options)
    : corpus_(std::move(corpus)), options_(options) {
  for (const auto& [category, queries] : corpus_.queries) {
    if (!queries.empty()) categories_.push_back(category);
  }
}

absl::StatusOr<std::unique_ptr<BenignSessionSimulator>> BenignSessionSimulator::Create(
    BenignCorpus corpus, BenignSessionOptions options) {
  for (double p : {options.follow_up_probability, options.pivot_probability, options.broad_probability,
                   options.briefing_probability}) {
    if (!(p >= 0 && p <= 1))
      return absl::InvalidArgumentError("benign sessions: probabilities must be in [0, 1]");
  }
  std::unique_ptr<BenignSessionSimulator> sim(new BenignSessionSimulator(std::move(corpus), options));
  if (sim->categories_.empty()) return absl::InvalidArgumentError("benign sessions: the corpus has no query");
  return sim;
}

std::string BenignSessionSimulator::CategoryQuestion(State& state, const std::string& category,
                                                     SeededCsprng& rng) const {
  std::vector<std::string>& order = state.order[category];
  size_t& next = state.next[category];
  if (next >= order.size()) {  // first use, or every question asked: a new shuffled pass
    order = corpus_.queries.at(category);
    Shuffle(order, rng);
    next = 0;
  }
  return order[next++];
}

std::string BenignSessionSimulator::FollowUp(const AttackStep* last, const std::string& category,
                                             SeededCsprng& rng, std::string* source) const {
  std::string about;
  if (last != nullptr && !last->hits.empty()) {
    about = last->hits[0].text;
    *source = last->hits[0].id;
  } else if (auto it = corpus_.memories.find(category); it != corpus_.memories.end() && !it->second.empty()) {
    about = it->second[UniformIndex(rng, it->second.size())];
  }
  const std::vector<std::string> words = SalientWords(about, 3);
  if (words.empty()) {
    source->clear();
    return "";
  }
  const std::string& word = words[UniformIndex(rng, words.size())];
  const std::string& t = FollowUpTemplates()[UniformIndex(rng, FollowUpTemplates().size())];
  return absl::StrReplaceAll(t, {{"{w}", word}});
}

absl::StatusOr<AttackSession> BenignSessionSimulator::Run(ExtractionTarget& target, std::string_view session,
                                                          const AttackBudget& budget, SeededCsprng& rng) {
  BULWARK_RETURN_IF_ERROR(ValidateBudget(budget));
  SessionRecorder recorder(&target, std::string(Name()), std::string(session), budget.k);
  State state;
  const bool briefing = Bernoulli(rng, options_.briefing_probability);
  std::vector<std::string> focus = categories_;  // briefing: every category, in a random order
  Shuffle(focus, rng);
  if (!briefing) focus.resize(std::min<size_t>(focus.size(), 1 + UniformIndex(rng, 2)));  // persona: 1-2
  size_t current = 0;
  const AttackStep* last = nullptr;
  for (int t = 0; t < budget.queries; ++t) {
    std::string query, source;
    if (Bernoulli(rng, options_.follow_up_probability)) query = FollowUp(last, focus[current], rng, &source);
    if (query.empty() && briefing && t % kBriefingEvery == 0) {
      current = (t / kBriefingEvery) % focus.size();
      query = BriefingQuestion(focus[current]);
    }
    if (query.empty() && Bernoulli(rng, options_.broad_probability)) {
      query = BroadQuestions()[UniformIndex(rng, BroadQuestions().size())];
    }
    if (query.empty()) {
      // A pivot: to the persona's other category (a one-category persona stays on its topic).
      if (!briefing && focus.size() > 1 && Bernoulli(rng, options_.pivot_probability)) current = 1 - current;
      query = CategoryQuestion(state, focus[current], rng);
    }
    BULWARK_ASSIGN_OR_RETURN(const AttackStep* step, recorder.Send(std::move(query), std::move(source)));
    last = step;
  }
  return std::move(recorder).Finish();
}

}  // namespace bulwark::extraction
