// RunExtractionAttacks (see run_extraction.h).
#include "attack/extraction/run_extraction.h"

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include <algorithm>

#include "attack/extraction/attack_log.h"
#include "attack/extraction/benign_session.h"
#include "attack/extraction/dgea.h"
#include "attack/extraction/extraction_rng.h"
#include "attack/extraction/ikea.h"
#include "attack/extraction/mextra.h"
#include "attack/extraction/rag_thief.h"
#include "attack/extraction/wordnet_graph.h"
#include "core/status_macros.h"
#include "embed/embedder_factory.h"
#include "llm/chat_client.h"

namespace bulwark::extraction {
namespace {

// What the attacks share: the embedder, WordNet and the LLM, built once per run.
struct Resources {
  const Embedder* embedder = nullptr;
  std::unique_ptr<Embedder> owned_embedder;
  std::shared_ptr<const WordNetGraph> wordnet;
  std::unique_ptr<ChatClient> llm;
};

absl::Status ValidateOptions(const ExtractionAttackOptions& options) {
  if (options.attacks.empty()) return absl::InvalidArgumentError("no attack named");
  absl::flat_hash_set<std::string> seen;
  for (const std::string& name : options.attacks) {
    const auto& names = ExtractionAttackNames();
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown extraction attack \"", name, "\""));
    }
    if (!seen.insert(name).second)
      return absl::InvalidArgumentError(absl::StrCat("attack \"", name, "\" named twice"));
  }
  if (options.sessions < 1 || options.sessions > 100000) {
    return absl::InvalidArgumentError("sessions must be in 1..100000");
  }
  BULWARK_RETURN_IF_ERROR(ValidateBudget(options.budget));
  if (seen.contains("benign")) {
    if (options.benign_query_files.empty()) return absl::InvalidArgumentError("\"benign\" needs query files");
    if (options.benign_lengths.empty()) return absl::InvalidArgumentError("\"benign\" needs session lengths");
    for (int length : options.benign_lengths) {
      BULWARK_RETURN_IF_ERROR(ValidateBudget({.queries = length, .k = options.budget.k}));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Resources> MakeResources(const ExtractionAttackOptions& options) {
  Resources r;
  r.embedder = options.embedder;
  if (r.embedder == nullptr) {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> embedder, CreateEmbedder(options.embedder_config));
    r.owned_embedder = std::move(embedder);
    r.embedder = r.owned_embedder.get();
  }
  BULWARK_ASSIGN_OR_RETURN(std::shared_ptr<const WordNetGraph> wordnet,
                           WordNetGraph::Shared(options.wordnet_dir));
  r.wordnet = std::move(wordnet);
  if (!options.llm.is_null()) {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<ChatClient> llm, ChatClient::FromConfig(options.llm));
    r.llm = std::move(llm);
  }
  return r;
}

absl::StatusOr<std::unique_ptr<ExtractionAttack>> MakeAttack(const std::string& name,
                                                             const ExtractionAttackOptions& options,
                                                             const Resources& r) {
  if (name.starts_with("mextra_")) {
    const MextraVariant variant = name == "mextra_general" ? MextraVariant::kGeneral
                                  : name == "mextra_edit"  ? MextraVariant::kEdit
                                                           : MextraVariant::kCosine;
    return std::make_unique<MextraAttack>(MextraOptions{
        .variant = variant, .domain_phrases = options.topics, .wordnet = r.wordnet, .llm = r.llm.get()});
  }
  if (name == "dgea") return DgeaAttack::Create({.embedder = r.embedder, .wordnet = r.wordnet});
  if (name == "rag_thief") {
    return std::make_unique<RagThiefAttack>(
        RagThiefOptions{.wordnet = r.wordnet, .restart_words = options.topics, .llm = r.llm.get()});
  }
  if (name == "ikea") {
    return IkeaAttack::Create(
        {.embedder = r.embedder, .wordnet = r.wordnet, .topics = options.topics, .llm = r.llm.get()});
  }
  BULWARK_ASSIGN_OR_RETURN(BenignCorpus corpus,
                           LoadBenignCorpus(options.benign_query_files, options.benign_memories_file));
  return BenignSessionSimulator::Create(std::move(corpus), {});
}

}  // namespace

const std::vector<std::string>& ExtractionAttackNames() {
  static const std::vector<std::string> kNames = {"mextra_general", "mextra_edit", "mextra_cosine", "dgea",
                                                  "rag_thief",      "ikea",        "benign"};
  return kNames;
}

absl::StatusOr<std::vector<ExtractionSessionSummary>> RunExtractionAttacks(
    const ExtractionAttackOptions& options, ExtractionTarget& target, std::ostream& log) {
  BULWARK_RETURN_IF_ERROR(ValidateOptions(options));
  BULWARK_ASSIGN_OR_RETURN(Resources resources, MakeResources(options));
  std::vector<std::unique_ptr<ExtractionAttack>> attacks;  // all built before the first query
  for (const std::string& name : options.attacks) {
    BULWARK_ASSIGN_OR_RETURN(std::unique_ptr<ExtractionAttack> attack, MakeAttack(name, options, resources));
    attacks.push_back(std::move(attack));
  }
  std::vector<ExtractionSessionSummary> summaries;
  for (const auto& attack : attacks) {
    const bool benign = attack->Name() == "benign";
    const std::vector<int> lengths =
        benign ? options.benign_lengths : std::vector<int>{options.budget.queries};
    for (int length : lengths) {
      const std::string generator = benign ? absl::StrCat("benign-t", length) : std::string(attack->Name());
      for (int i = 0; i < options.sessions; ++i) {
        const std::string session = absl::StrCat(generator, "-", options.seed, "-", i);
        SeededCsprng rng = SessionRng(options.seed, generator, static_cast<uint64_t>(i));
        BULWARK_ASSIGN_OR_RETURN(
            AttackSession run, attack->Run(target, session, {.queries = length, .k = options.budget.k}, rng));
        BULWARK_RETURN_IF_ERROR(WriteAttackLog(run, log));
        summaries.push_back({run.attack, run.session, length, run.UniqueHits(), run.RefusedSteps()});
      }
    }
  }
  return summaries;
}

}  // namespace bulwark::extraction
