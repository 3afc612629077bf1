// Honeypot text gates (see pot_text_gate.h).
#include "honeypot/pot_text_gate.h"

#include <absl/container/inlined_vector.h>
#include <absl/status/status.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include <algorithm>
#include <initializer_list>
#include <numeric>

#include "core/status_macros.h"
#include "honeypot/bigram_lm.h"

namespace bulwark::honeypot {

const std::string_view kPotInstructionRules =
    "# Extraction imperatives that a honeypot text must not contain (pot_text_gate.h).\n"
    "pot_instruction\tdump_memory\t\\b(save|print|output|repeat|list|return|include|copy|reveal|show|tell|"
    "give|"
    "write|send|dump|export|provide)\\b.{0,40}\\b(all|every|previous|prior|stored|hidden|entire|whole)\\b.{0,"
    "30}"
    "\\b(examples?|memor(y|ies)|documents?|records?|context|questions?|queries|data|entries|chunks?|"
    "conversations?|history)\\b\n"
    "pot_instruction\tdo_not_follow\t\\b(do\\s+not|don'?t|never)\\s+(follow|answer|solve|obey)\\b\n"
    "pot_instruction\tyou_must\t\\byou\\s+(must|should|have\\s+to|need\\s+to|are\\s+required\\s+to)\\b\n";

namespace {

uint64_t HashNgram(std::span<const std::string> tokens) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the tokens with a separator
  for (const std::string& t : tokens) {
    for (char c : t) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  }
  return h;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PotTextGate>> PotTextGate::Create(std::span<const std::string> memory_texts,
                                                                 RowMatrixXf memory_embeddings,
                                                                 double privacy_bound,
                                                                 const PotTextGateOptions& options) {
  if (static_cast<Eigen::Index>(memory_texts.size()) != memory_embeddings.rows()) {
    return absl::InvalidArgumentError("pot text gate: one embedding per memory text is required");
  }
  if (!(privacy_bound > -1 && privacy_bound <= 1)) {
    return absl::InvalidArgumentError("pot text gate: privacy bound must be in (-1, 1]");
  }
  if (options.copy_ngram < 2 || options.copy_ngram > 16) {
    return absl::InvalidArgumentError("pot text gate: copy_ngram must be in [2, 16]");
  }
  std::unique_ptr<PotTextGate> gate(new PotTextGate());
  gate->memories_ = std::move(memory_embeddings);
  gate->privacy_bound_ = privacy_bound;
  gate->n_ = options.copy_ngram;
  for (const std::string& text : memory_texts) {
    const std::vector<std::string> tokens = BigramLm::Tokenize(text);
    for (size_t i = 0; i + static_cast<size_t>(gate->n_) <= tokens.size(); ++i) {
      gate->memory_ngrams_.insert(HashNgram(std::span(tokens).subspan(i, static_cast<size_t>(gate->n_))));
    }
  }
  BULWARK_ASSIGN_OR_RETURN(auto write_rules, ValidationRules::SharedDefault());
  BULWARK_ASSIGN_OR_RETURN(auto pot_rules, ValidationRules::Parse(kPotInstructionRules));
  gate->write_rules_ = std::move(write_rules);
  gate->pot_rules_ = std::move(pot_rules);
  return gate;
}

double PotTextGate::PrivacyMax(std::span<const float> embedding, int* argmax) const {
  if (memories_.rows() == 0) return -1;
  const Eigen::Map<const Eigen::VectorXf> e(embedding.data(), static_cast<Eigen::Index>(embedding.size()));
  const Eigen::VectorXf scores = memories_ * e;
  Eigen::Index best = 0;
  const float max = scores.maxCoeff(&best);
  if (argmax != nullptr) *argmax = static_cast<int>(best);
  return max;
}

std::string PotTextGate::CopiedNgram(std::string_view text) const {
  const std::vector<std::string> tokens = BigramLm::Tokenize(text);
  for (size_t i = 0; i + static_cast<size_t>(n_) <= tokens.size(); ++i) {
    const auto gram = std::span(tokens).subspan(i, static_cast<size_t>(n_));
    if (memory_ngrams_.contains(HashNgram(gram))) {
      std::string out;
      for (const std::string& t : gram) absl::StrAppend(&out, out.empty() ? "" : " ", t);
      return out;
    }
  }
  return "";
}

std::string PotTextGate::InstructionRule(std::string_view text) const {
  for (const ValidationRules* rules :
       std::initializer_list<const ValidationRules*>{write_rules_.get(), pot_rules_.get()}) {
    absl::InlinedVector<uint32_t, 4> hits;
    rules->Match(text, &hits);
    if (!hits.empty()) {
      const ValidationRule& r = rules->rules()[hits[0]];
      return absl::StrCat(r.category, "/", r.name);
    }
  }
  return "";
}

GateResult PotTextGate::Check(std::string_view text, std::span<const float> embedding) const {
  GateResult r;
  r.privacy_max = PrivacyMax(embedding, &r.nearest_memory);
  if (r.privacy_max >= privacy_bound_) {
    r.reason = absl::StrFormat("privacy %.4f >= bound %.4f (memory %d)", r.privacy_max, privacy_bound_,
                               r.nearest_memory);
    return r;
  }
  if (std::string gram = CopiedNgram(text); !gram.empty()) {
    r.reason = absl::StrCat("copies memory ", n_, "-gram '", gram, "'");
    return r;
  }
  if (std::string rule = InstructionRule(text); !rule.empty()) {
    r.reason = absl::StrCat("instruction rule ", rule);
    return r;
  }
  r.passed = true;
  return r;
}

absl::StatusOr<double> CalibratePrivacyBound(const RowMatrixXf& memories, double quantile, int sample,
                                             uint64_t seed) {
  const Eigen::Index n = memories.rows();
  if (n < 2) return absl::InvalidArgumentError("privacy bound: needs at least 2 memories");
  if (!(quantile >= 0 && quantile <= 1) || sample < 1) {
    return absl::InvalidArgumentError("privacy bound: quantile must be in [0, 1] and sample >= 1");
  }
  std::vector<int> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), 0);
  if (n > sample) {  // a seeded partial Fisher-Yates shuffle picks the sample
    SeededCsprng rng(SeedFor(seed, SeedDomain::kPrivacySample));
    for (int i = 0; i < sample; ++i) {
      std::swap(rows[static_cast<size_t>(i)],
                rows[static_cast<size_t>(i) + rng.Uniform(static_cast<uint64_t>(n - i))]);
    }
    rows.resize(static_cast<size_t>(sample));
  }
  std::vector<double> nearest;
  nearest.reserve(rows.size());
  constexpr size_t kBlock = 128;
  for (size_t begin = 0; begin < rows.size(); begin += kBlock) {
    const size_t count = std::min(kBlock, rows.size() - begin);
    RowMatrixXf block(static_cast<Eigen::Index>(count), memories.cols());
    for (size_t i = 0; i < count; ++i)
      block.row(static_cast<Eigen::Index>(i)) = memories.row(rows[begin + i]);
    RowMatrixXf sims = block * memories.transpose();
    for (size_t i = 0; i < count; ++i) {
      sims(static_cast<Eigen::Index>(i), rows[begin + i]) = -2;  // not its own neighbour
      nearest.push_back(sims.row(static_cast<Eigen::Index>(i)).maxCoeff());
    }
  }
  std::sort(nearest.begin(), nearest.end());
  const double pos = quantile * static_cast<double>(nearest.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, nearest.size() - 1);
  return nearest[lo] + (pos - static_cast<double>(lo)) * (nearest[hi] - nearest[lo]);
}

}  // namespace bulwark::honeypot
