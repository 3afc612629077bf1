// The lexical pot-text realiser (see lexical_realizer.h).
#include "honeypot/lexical_realizer.h"

#include <absl/container/flat_hash_set.h>
#include <absl/status/status.h>
#include <absl/strings/str_cat.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/status_macros.h"
#include "embed/string_view_hash.h"

namespace bulwark::honeypot {
namespace {

// Function words the ordering may put between content words (never two in a row).
constexpr std::string_view kFunctionWords[] = {"the", "of",   "and", "a",  "to", "in",
                                               "for", "with", "or",  "on", "by", "as"};

bool IsLowerWord(std::string_view w) {
  return w.size() >= 3 && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

// The `count` largest entries of `scores`, descending, ties by index.
std::vector<int> TopIndices(const Eigen::VectorXf& scores, int count) {
  std::vector<int> idx(static_cast<size_t>(scores.size()));
  std::iota(idx.begin(), idx.end(), 0);
  const size_t take = std::min(idx.size(), static_cast<size_t>(std::max(count, 0)));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(take), idx.end(),
                    [&](int a, int b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  idx.resize(take);
  return idx;
}

std::string JoinSentence(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view w : words) absl::StrAppend(&out, out.empty() ? "" : " ", std::string(w));
  if (!out.empty()) {
    out[0] = static_cast<char>(out[0] - 'a' + 'A');
    out += '.';
  }
  return out;
}

}  // namespace

// Per-call state of Realize.
struct LexicalRealizer::Context {
  Eigen::VectorXf target;
  std::vector<int> pool;      // word indices
  RowMatrixXf near_memories;  // the privacy_neighbours memories nearest the target
  absl::flat_hash_set<std::string, StringViewHash, StringViewEq> safety_tokens;
  double bound = 1;
  const PotTextGate* gate = nullptr;
};

std::vector<std::string> LexicalRealizer::DefaultVocabulary(const BigramLm& lm,
                                                            const WordNetCanonicalizer* wordnet,
                                                            uint32_t min_count) {
  std::vector<std::string> words;
  lm.ForEachToken([&](std::string_view w, uint32_t count) {
    if (count < min_count || !IsLowerWord(w) || WordNetCanonicalizer::IsStopword(w)) return;
    if (wordnet != nullptr) {
      bool lemma = false;
      for (WordNetPos pos : {WordNetPos::kNoun, WordNetPos::kVerb, WordNetPos::kAdj, WordNetPos::kAdv}) {
        lemma = lemma || !wordnet->BaseForms(w, pos).empty();
      }
      if (!lemma) return;
    }
    words.emplace_back(w);
  });
  return words;
}

absl::StatusOr<std::unique_ptr<LexicalRealizer>> LexicalRealizer::Create(const Embedder& embedder,
                                                                         std::shared_ptr<const BigramLm> lm,
                                                                         std::vector<std::string> vocabulary,
                                                                         const LexicalRealizerOptions& o) {
  if (lm == nullptr) return absl::InvalidArgumentError("realiser: no language model");
  if (o.pool_size < 1 || o.pool_size > 4096 || o.max_words < 1 || o.max_words > 32 || o.beam_width < 1 ||
      o.beam_width > 256 || o.expansions < 1 || o.expansions > 256 || !(o.min_gain >= 0) ||
      o.privacy_neighbours < 1 || !(o.privacy_margin >= 0)) {
    return absl::InvalidArgumentError("realiser: an option is out of range");
  }
  absl::StatusOr<std::vector<std::vector<float>>> vectors = embedder.EmbedBatch(vocabulary);
  if (!vectors.ok()) return vectors.status();
  std::unique_ptr<LexicalRealizer> r(new LexicalRealizer(embedder, std::move(lm), o));
  std::vector<std::vector<float>> kept;
  for (size_t i = 0; i < vocabulary.size(); ++i) {
    const auto& v = (*vectors)[i];
    if (std::any_of(v.begin(), v.end(), [](float x) { return x != 0; })) {
      r->words_.push_back(std::move(vocabulary[i]));
      kept.push_back(v);
    }
  }
  if (r->words_.empty()) return absl::InvalidArgumentError("realiser: the vocabulary is empty");
  r->embeddings_ = ToMatrix(kept);
  return r;
}

absl::StatusOr<std::vector<int>> LexicalRealizer::MatchingPursuit(const Context& ctx) const {
  std::vector<int> bag;
  std::vector<bool> used(ctx.pool.size(), false);
  std::string text;
  double current = 0;
  while (static_cast<int>(bag.size()) < options_.max_words) {
    int best = -1;
    double best_cos = current + options_.min_gain;
    for (size_t c = 0; c < ctx.pool.size(); ++c) {
      if (used[c]) continue;
      const std::string& word = words_[static_cast<size_t>(ctx.pool[c])];
      absl::StatusOr<std::vector<float>> e =
          embedder_.Embed(text.empty() ? word : absl::StrCat(text, " ", word));
      if (!e.ok()) return e.status();
      const Eigen::Map<const Eigen::VectorXf> v(e->data(), static_cast<Eigen::Index>(e->size()));
      const double cos = v.dot(ctx.target);
      if (cos <= best_cos) continue;
      if (ctx.near_memories.rows() > 0 &&
          (ctx.near_memories * v).maxCoeff() >= ctx.bound - options_.privacy_margin) {
        continue;
      }
      best = static_cast<int>(c);
      best_cos = cos;
    }
    if (best < 0) break;
    used[static_cast<size_t>(best)] = true;
    bag.push_back(ctx.pool[static_cast<size_t>(best)]);
    const std::string& word = words_[static_cast<size_t>(bag.back())];
    text = text.empty() ? word : absl::StrCat(text, " ", word);
    current = best_cos;
  }
  return bag;
}

std::vector<std::vector<std::string_view>> LexicalRealizer::OrderByLm(const std::vector<int>& bag) const {
  struct Beam {
    std::vector<int> seq;  // indices into `tokens`
    uint32_t used = 0;     // bag words used (bit i = bag[i])
    double lm_sum = 0;
    int last_id = BigramLm::kBegin;
    bool last_function = true;  // no function word first
    double Mean() const { return lm_sum / static_cast<double>(seq.size() + 1); }
  };
  std::vector<std::string_view> tokens;
  for (int w : bag) tokens.push_back(words_[static_cast<size_t>(w)]);
  for (std::string_view f : kFunctionWords) tokens.push_back(f);
  std::vector<int> lm_ids;
  for (std::string_view t : tokens) lm_ids.push_back(lm_->Id(t));
  const size_t n_bag = bag.size();
  const uint32_t all = n_bag >= 32 ? 0xffffffffu : (1u << n_bag) - 1;

  std::vector<Beam> beams(1), finished;
  for (size_t step = 0; step < 2 * n_bag && !beams.empty(); ++step) {
    std::vector<Beam> next;
    for (const Beam& b : beams) {
      std::vector<std::pair<double, int>> options;  // (log prob, token)
      for (size_t t = 0; t < tokens.size(); ++t) {
        const bool is_bag = t < n_bag;
        if (is_bag ? (b.used >> t & 1u) != 0 : b.last_function) continue;
        options.emplace_back(lm_->LogProb(b.last_id, lm_ids[t]), static_cast<int>(t));
      }
      const size_t keep = std::min(options.size(), static_cast<size_t>(options_.expansions));
      std::partial_sort(
          options.begin(), options.begin() + static_cast<std::ptrdiff_t>(keep), options.end(),
          [](auto& x, auto& y) { return x.first > y.first || (x.first == y.first && x.second < y.second); });
      for (size_t o = 0; o < keep; ++o) {
        Beam nb = b;
        const auto t = static_cast<size_t>(options[o].second);
        nb.seq.push_back(options[o].second);
        nb.lm_sum += options[o].first;
        nb.last_id = lm_ids[t];
        nb.last_function = t >= n_bag;
        if (t < n_bag) nb.used |= 1u << t;
        if (nb.used == all) {
          nb.lm_sum += lm_->LogProb(nb.last_id, BigramLm::kEnd);
          finished.push_back(std::move(nb));
        } else {
          next.push_back(std::move(nb));
        }
      }
    }
    const size_t keep = std::min(next.size(), static_cast<size_t>(options_.beam_width));
    std::partial_sort(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(keep), next.end(),
                      [](const Beam& x, const Beam& y) { return x.Mean() > y.Mean(); });
    next.resize(keep);
    beams = std::move(next);
  }
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Beam& x, const Beam& y) { return x.Mean() > y.Mean(); });
  if (finished.size() > static_cast<size_t>(options_.beam_width))
    finished.resize(static_cast<size_t>(options_.beam_width));
  std::vector<std::vector<std::string_view>> out;
  for (const Beam& b : finished) {
    std::vector<std::string_view> words;
    for (int t : b.seq) words.push_back(tokens[static_cast<size_t>(t)]);
    out.push_back(std::move(words));
  }
  out.emplace_back(tokens.begin(),
                   tokens.begin() + static_cast<std::ptrdiff_t>(n_bag));  // the plain bag order
  return out;
}

absl::Status LexicalRealizer::ScoreCandidate(const Context& ctx, const std::vector<std::string_view>& words,
                                             std::string text, RealizedPot* out) const {
  out->text = std::move(text);
  absl::StatusOr<std::vector<float>> e = embedder_.Embed(out->text);
  if (!e.ok()) return e.status();
  out->embedding = *std::move(e);
  const Eigen::Map<const Eigen::VectorXf> v(out->embedding.data(),
                                            static_cast<Eigen::Index>(out->embedding.size()));
  out->target_cos = v.dot(ctx.target);
  out->readable = std::clamp((lm_->MeanLogProb(words) + 12.0) / 8.0, 0.0, 1.0) - 1.0;
  int content = 0, entailed = 0;
  for (std::string_view w : words) {
    if (std::find(std::begin(kFunctionWords), std::end(kFunctionWords), w) != std::end(kFunctionWords))
      continue;
    ++content;
    entailed += ctx.safety_tokens.contains(w) ? 1 : 0;
  }
  out->words = content;
  out->entail = content > 0 ? static_cast<double>(entailed) / content : 0.0;
  const double local_privacy = ctx.near_memories.rows() > 0 ? (ctx.near_memories * v).maxCoeff() : 0.0;
  out->score = options_.weight_embedding * out->target_cos + options_.weight_readable * out->readable +
               options_.weight_entail * out->entail - options_.weight_privacy * local_privacy;
  return absl::OkStatus();
}

absl::StatusOr<LexicalRealizer::Context> LexicalRealizer::MakeContext(std::span<const float> target,
                                                                      const PotTextGate& gate,
                                                                      std::string_view safety_content) const {
  if (static_cast<Eigen::Index>(target.size()) != embeddings_.cols()) {
    return absl::InvalidArgumentError("realiser: the target's dimension differs from the embedder's");
  }
  Context ctx;
  ctx.target = Eigen::Map<const Eigen::VectorXf>(target.data(), static_cast<Eigen::Index>(target.size()));
  ctx.gate = &gate;
  ctx.bound = gate.privacy_bound();
  ctx.pool = TopIndices(embeddings_ * ctx.target, options_.pool_size);
  for (const std::string& t : BigramLm::Tokenize(safety_content)) ctx.safety_tokens.insert(t);
  for (size_t i = 0; i < words_.size() && !ctx.safety_tokens.empty(); ++i) {
    if (ctx.safety_tokens.contains(words_[i]) &&
        std::find(ctx.pool.begin(), ctx.pool.end(), static_cast<int>(i)) == ctx.pool.end()) {
      ctx.pool.push_back(static_cast<int>(i));
    }
  }
  const RowMatrixXf& memories = gate.memory_embeddings();
  if (memories.rows() > 0 && memories.cols() == embeddings_.cols()) {
    const std::vector<int> near = TopIndices(memories * ctx.target, options_.privacy_neighbours);
    ctx.near_memories.resize(static_cast<Eigen::Index>(near.size()), memories.cols());
    for (size_t i = 0; i < near.size(); ++i) {
      ctx.near_memories.row(static_cast<Eigen::Index>(i)) = memories.row(near[i]);
    }
  }
  return ctx;
}

absl::StatusOr<std::vector<std::string>> LexicalRealizer::KeyWords(std::span<const float> target,
                                                                   const PotTextGate& gate,
                                                                   std::string_view safety_content) const {
  absl::StatusOr<Context> ctx = MakeContext(target, gate, safety_content);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<std::vector<int>> bag = MatchingPursuit(*ctx);
  if (!bag.ok()) return bag.status();
  std::vector<std::string> words;
  for (int w : *bag) words.push_back(words_[static_cast<size_t>(w)]);
  return words;
}

absl::StatusOr<RealizedPot> LexicalRealizer::Evaluate(std::string_view text, std::span<const float> target,
                                                      const PotTextGate& gate,
                                                      std::string_view safety_content) const {
  absl::StatusOr<Context> ctx = MakeContext(target, gate, safety_content);
  if (!ctx.ok()) return ctx.status();
  const std::vector<std::string> tokens = BigramLm::Tokenize(text);
  const std::vector<std::string_view> words(tokens.begin(), tokens.end());
  RealizedPot pot;
  BULWARK_RETURN_IF_ERROR(ScoreCandidate(*ctx, words, std::string(text), &pot));
  const GateResult g = gate.Check(pot.text, pot.embedding);
  pot.privacy_max = g.privacy_max;
  pot.passed = g.passed;
  pot.rejection = g.reason;
  return pot;
}

absl::StatusOr<RealizedPot> LexicalRealizer::Realize(std::span<const float> target, const PotTextGate& gate,
                                                     std::string_view safety_content) const {
  absl::StatusOr<Context> ctx = MakeContext(target, gate, safety_content);
  if (!ctx.ok()) return ctx.status();
  absl::StatusOr<std::vector<int>> bag = MatchingPursuit(*ctx);
  if (!bag.ok()) return bag.status();
  RealizedPot best;
  if (bag->empty()) {
    best.rejection = "no vocabulary word moves toward the target within the privacy bound";
    return best;
  }
  std::vector<RealizedPot> candidates;
  for (const auto& words : OrderByLm(*bag)) {
    RealizedPot c;
    BULWARK_RETURN_IF_ERROR(ScoreCandidate(*ctx, words, JoinSentence(words), &c));
    candidates.push_back(std::move(c));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const RealizedPot& a, const RealizedPot& b) { return a.score > b.score; });
  for (RealizedPot& c : candidates) {
    const GateResult g = gate.Check(c.text, c.embedding);
    c.privacy_max = g.privacy_max;
    c.passed = g.passed;
    c.rejection = g.reason;
    if (g.passed) return std::move(c);
  }
  return std::move(candidates.front());
}

}  // namespace bulwark::honeypot
