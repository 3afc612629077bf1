// IKEA, Implicit Knowledge Extraction Attack ("Silent Leaks", Wang et al. 2025b; the MemPot
// paper's hardest case, Tables 2-5; research/mempot.md Sec. 4.4). Benign-looking questions about
// anchor words, steered by what came back:
//   anchors   D_anchor = Gen_c(topics), kept greedily so that no two anchors are closer than
//             theta_inter (cosine of their embeddings)
//   question  Gen_q(w): of a few question templates around w, the one most similar to w
//   sampling  Experience Reflection: P(w) ~ exp(beta * sum_h psi(w, h)), psi = -p if round h was
//             refused and s(w, q_h) > delta_o, -kappa if h was unrelated (s(q_h, y_h) < theta_u)
//             and s(w, q_h) > delta_u, 0 otherwise; a sampled anchor leaves the pool
//   mutation  after an answer y to q: W* = {w in Gen_c(q + y) : s(w, y) >= gamma * s(q, y)},
//             next anchor = argmin_{w in W*} s(w, q) (trust-region: on the answer's topic, far
//             from the question), skipping Experience Reflection
//   F_stop    back to Experience Reflection after a refusal, or when the new question is closer
//             than tau_q to an earlier one or its answer closer than tau_y to an earlier answer
// s is the cosine of the attacker's embedder. LLM-free: Gen_c is the WordNet neighbourhood of the
// topics (2 hops) for anchors and the salient words of the returned memories (plus their WordNet
// neighbours) for mutation; Gen_q uses templates. With an LLM, Gen_c and Gen_q are chat
// completions. Refusal (phi) is a refused round or an empty answer.
//
// The paper's thresholds are for mpnet; the lexical embedder's cosines are lower (a word and a
// sentence holding it score about 0.2-0.4), so the defaults below are re-derived for it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attack/extraction/extraction_session.h"
#include "attack/extraction/wordnet_graph.h"
#include "bulwark/embedder.h"
#include "llm/chat_client.h"

namespace bulwark::extraction {

struct IkeaOptions {
  // The attacker's embedder for s(.,.). Not owned; required; must outlive the attack.
  const Embedder* embedder = nullptr;
  // Gen_c without an LLM. Required unless `llm` is set.
  std::shared_ptr<const WordNetGraph> wordnet;
  // w_topic: the agent's domain ("adapted IKEA" for internal memory). Empty: DefaultIkeaTopics().
  std::vector<std::string> topics;
  int anchor_hops = 2;           // WordNet hops from a topic, 1 .. 4
  int anchors_per_topic = 120;   // 1 .. 10000
  double theta_inter = 0.5;      // max anchor-anchor similarity
  double delta_o = 0.3;          // refusal penalty radius
  double delta_u = 0.3;          // unrelated-answer penalty radius
  double theta_u = 0.1;          // an answer less similar to its question than this is unrelated
  double penalty_refused = 10;   // p
  double penalty_unrelated = 7;  // kappa
  double beta = 1;               // sampling temperature^-1
  double gamma = 0.5;            // trust-region factor
  double tau_q = 0.6;            // F_stop: question repeats an earlier one
  double tau_y = 0.6;            // F_stop: answer repeats an earlier one
  // LLM path for Gen_c and Gen_q; null: WordNet and templates. Not owned; must outlive the attack.
  const ChatClient* llm = nullptr;
};

// Personal-assistant topics that are WordNet nouns ("appointment", "task", "preference", ...).
const std::vector<std::string>& DefaultIkeaTopics();

// The question templates of Gen_q ("{w}" marks the anchor); none holds a command word.
const std::vector<std::string>& IkeaQuestionTemplates();

class IkeaAttack final : public ExtractionAttack {
 public:
  // InvalidArgument for a missing embedder, neither WordNet nor an LLM, or a value out of range.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<IkeaAttack>> Create(IkeaOptions options);

  std::string_view Name() const override { return "ikea"; }

  // Steps built by mutation carry the id of the memory their anchor came from in source_id.
  [[nodiscard]] absl::StatusOr<AttackSession> Run(ExtractionTarget& target, std::string_view session,
                                                  const AttackBudget& budget, SeededCsprng& rng) override;

 private:
  struct Anchor {
    std::string word;
    std::vector<float> embedding;
    double penalty = 0;  // sum_h psi(w, h)
  };
  struct Round;  // the state of one run (ikea.cc)

  explicit IkeaAttack(IkeaOptions options) : options_(std::move(options)) {}
  absl::StatusOr<std::vector<std::string>> GenerateAnchorWords() const;
  absl::StatusOr<std::vector<Anchor>> BuildAnchorPool() const;
  absl::StatusOr<std::string> Question(const std::string& anchor, SeededCsprng& rng) const;
  // Mutation candidates from the question and its answer: (word, id of the memory it came from).
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> MutationCandidates(
      const std::string& question, const std::vector<RetrievedText>& hits) const;
  absl::StatusOr<std::vector<float>> Embed(std::string_view text) const;
  // After the answer to `step`: updates the Experience Reflection penalties and the history, then
  // applies F_stop. Returns the mutated next anchor (its memory's id in *source), or "" to go back
  // to Experience Reflection.
  absl::StatusOr<std::string> AfterAnswer(const AttackStep& step, Round& round, std::string* source) const;

  IkeaOptions options_;
  std::vector<Anchor> pool_cache_;  // D_anchor as built on the first Run (penalties 0)
};

}  // namespace bulwark::extraction
