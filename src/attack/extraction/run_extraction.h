// RunExtractionAttacks: the library side of `bulwark attack extraction` (the CLI command is a thin
// wrapper, see doc/attacks.md): builds the named attacks (and the benign-session simulator), runs
// `sessions` sessions of each against one ExtractionTarget, and writes every session to the attack
// log (attack_log.h) as soon as it is done.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "attack/extraction/extraction_session.h"
#include "bulwark/embedder.h"

namespace bulwark::extraction {

struct ExtractionAttackOptions {
  // Any of ExtractionAttackNames(); each runs `sessions` sessions. Required, no duplicates.
  std::vector<std::string> attacks;
  int sessions = 1;     // per attack, and per length for "benign"; 1 .. 100000
  AttackBudget budget;  // rounds (default 64, MemPot Sec. 5.3) and k of the attack sessions
  std::vector<int> benign_lengths = {8, 64};  // "benign": session lengths (research/mempot.md Sec. 3.3)
  uint64_t seed = 1;                          // session i of generator g draws from SessionRng(seed, g, i)
  // The attacker's copy of the retriever's encoder (DGEA optimizes against it, IKEA measures with
  // it): `embedder` if set (not owned), else CreateEmbedder(embedder_config). Must match the
  // store's embedder for the attacks to work as intended.
  const Embedder* embedder = nullptr;
  nlohmann::json embedder_config = {{"kind", "lexical"}};
  std::string wordnet_dir = "/usr/share/wordnet";
  // The LLM path of MEXTRA, RAG-Thief and IKEA (ChatClient::FromConfig); null: LLM-free.
  nlohmann::json llm;
  // The agent's domain: IKEA's topics (WordNet nouns) and MEXTRA-cosine's phrases / RAG-Thief's
  // restart words. Empty: each attack's personal-assistant defaults.
  std::vector<std::string> topics;
  // "benign": query files (data/corpora/benign_queries.jsonl, ...) and an optional memory corpus.
  std::vector<std::string> benign_query_files;
  std::string benign_memories_file;
};

// "mextra_general", "mextra_edit", "mextra_cosine", "dgea", "rag_thief", "ikea", "benign".
const std::vector<std::string>& ExtractionAttackNames();

struct ExtractionSessionSummary {
  std::string attack;
  std::string session;
  int queries = 0;
  size_t unique_hits = 0;  // leakage: unique memory ids returned to the session
  size_t refused = 0;
};

// Runs the sessions in the order attacks x sessions (benign: x lengths) and writes each finished
// session to `log`. Returns one summary per session. Errors: InvalidArgument for bad options (an
// unknown or repeated attack, a count out of range, "benign" without query files), detected before
// any query is sent, so that nothing is written; then the errors of building an attack (WordNet
// missing: NotFound; a bad LLM or embedder config: InvalidArgument; the corpus files) and of
// running it (ExtractionAttack::Run). Sessions finished before an error stay in the log.
[[nodiscard]] absl::StatusOr<std::vector<ExtractionSessionSummary>> RunExtractionAttacks(
    const ExtractionAttackOptions& options, ExtractionTarget& target, std::ostream& log);

}  // namespace bulwark::extraction
