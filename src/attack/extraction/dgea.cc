// DGEA (see dgea.h).
#include "attack/extraction/dgea.h"

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include <cmath>
#include <numeric>

#include "attack/extraction/extraction_rng.h"
#include "core/status_macros.h"

namespace bulwark::extraction {
namespace {

double Dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

void Normalize(std::vector<float>* v) {
  const double norm = std::sqrt(Dot(*v, *v));
  if (norm > 0) {
    for (float& x : *v) x = static_cast<float>(x / norm);
  }
}

// A standard normal draw (Box-Muller).
double Gaussian(SeededCsprng& rng) {
  const double u1 = 1.0 - UniformDouble(rng);  // (0, 1]
  const double u2 = UniformDouble(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

}  // namespace

std::string DgeaQuery(const std::vector<std::string>& suffix) {
  return absl::StrCat(kDgeaPrefix, " ", absl::StrJoin(suffix, " "));
}

absl::StatusOr<std::unique_ptr<DgeaAttack>> DgeaAttack::Create(DgeaOptions options) {
  if (options.embedder == nullptr) return absl::InvalidArgumentError("dgea: an embedder is required");
  if ((options.vocabulary.empty() || options.public_corpus.empty()) && options.wordnet == nullptr) {
    return absl::InvalidArgumentError("dgea: WordNet is required for the default vocabulary and corpus");
  }
  if (options.suffix_tokens < 1 || options.suffix_tokens > 200 || options.iterations < 0 ||
      options.iterations > 100 || options.candidates < 0 || options.candidates > 4096 ||
      options.vocabulary_size < 1 || options.vocabulary_size > 100000 || options.corpus_size < 2 ||
      options.corpus_size > 100000) {
    return absl::InvalidArgumentError(
        "dgea: suffix_tokens, iterations, candidates or a list size out of range");
  }
  std::unique_ptr<DgeaAttack> attack(new DgeaAttack(std::move(options)));
  BULWARK_RETURN_IF_ERROR(attack->Prepare());
  return attack;
}

absl::Status DgeaAttack::Prepare() {
  const WordNetGraph* wordnet = options_.wordnet.get();
  if (options_.vocabulary.empty()) {
    std::vector<std::string> lemmas;
    for (size_t i = 0; i < wordnet->size(); ++i) {
      for (const std::string& lemma : wordnet->synset(static_cast<int32_t>(i)).lemmas) {
        if (IsPlainLemma(lemma)) lemmas.push_back(lemma);
      }
    }
    const size_t stride = std::max<size_t>(1, lemmas.size() / options_.vocabulary_size);
    for (size_t i = 0;
         i < lemmas.size() && options_.vocabulary.size() < static_cast<size_t>(options_.vocabulary_size);
         i += stride) {
      options_.vocabulary.push_back(lemmas[i]);
    }
  }
  if (options_.public_corpus.empty()) {
    const size_t stride = std::max<size_t>(1, wordnet->size() / options_.corpus_size);
    for (size_t i = 0;
         i < wordnet->size() && options_.public_corpus.size() < static_cast<size_t>(options_.corpus_size);
         i += stride) {
      options_.public_corpus.push_back(wordnet->synset(static_cast<int32_t>(i)).gloss);
    }
  }
  if (options_.vocabulary.empty()) return absl::InvalidArgumentError("dgea: empty vocabulary");
  const size_t d = static_cast<size_t>(options_.embedder->dimension());
  std::vector<double> sum(d, 0), sum_sq(d, 0);
  for (const std::string& text : options_.public_corpus) {
    BULWARK_ASSIGN_OR_RETURN(std::vector<float> e, options_.embedder->Embed(text));
    for (size_t i = 0; i < d && i < e.size(); ++i) sum[i] += e[i], sum_sq[i] += e[i] * e[i];
  }
  const double n = static_cast<double>(options_.public_corpus.size());
  mean_.assign(d, 0);
  stddev_.assign(d, 0);
  for (size_t i = 0; i < d; ++i) {
    mean_[i] = static_cast<float>(sum[i] / n);
    stddev_[i] = static_cast<float>(std::sqrt(std::max(0.0, sum_sq[i] / n - mean_[i] * mean_[i])));
  }
  return absl::OkStatus();
}

std::vector<float> DgeaAttack::Target(const std::vector<float>& extracted_sum, bool first,
                                      SeededCsprng& rng) const {
  std::vector<float> target(mean_.size());
  if (first) {
    for (size_t i = 0; i < target.size(); ++i)
      target[i] = static_cast<float>(mean_[i] + stddev_[i] * Gaussian(rng));
  } else {
    for (size_t i = 0; i < target.size(); ++i) target[i] = -extracted_sum[i];
  }
  Normalize(&target);
  return target;
}

absl::StatusOr<double> DgeaAttack::Loss(const std::vector<std::string>& suffix,
                                        const std::vector<float>& target) const {
  BULWARK_ASSIGN_OR_RETURN(std::vector<float> e, options_.embedder->Embed(DgeaQuery(suffix)));
  return 1.0 - Dot(e, target);
}

absl::StatusOr<std::vector<std::string>> DgeaAttack::Suffix(const std::vector<float>& target,
                                                            SeededCsprng& rng) const {
  const std::vector<std::string>& vocab = options_.vocabulary;
  std::vector<std::string> suffix(options_.suffix_tokens, "!");
  if (!options_.optimize) {
    for (std::string& word : suffix) word = vocab[UniformIndex(rng, vocab.size())];
    return suffix;
  }
  BULWARK_ASSIGN_OR_RETURN(double best, Loss(suffix, target));
  std::vector<int> positions(suffix.size());
  std::iota(positions.begin(), positions.end(), 0);
  for (int pass = 0; pass < options_.iterations; ++pass) {
    Shuffle(positions, rng);
    for (int pos : positions) {
      for (int c = 0; c < options_.candidates; ++c) {
        std::string previous = std::exchange(suffix[pos], vocab[UniformIndex(rng, vocab.size())]);
        BULWARK_ASSIGN_OR_RETURN(double loss, Loss(suffix, target));
        if (loss < best) {
          best = loss;
        } else {
          suffix[pos] = std::move(previous);
        }
      }
    }
  }
  return suffix;
}

absl::StatusOr<AttackSession> DgeaAttack::Run(ExtractionTarget& target, std::string_view session,
                                              const AttackBudget& budget, SeededCsprng& rng) {
  BULWARK_RETURN_IF_ERROR(ValidateBudget(budget));
  SessionRecorder recorder(&target, std::string(Name()), std::string(session), budget.k);
  std::vector<float> extracted_sum(mean_.size(), 0.0f);  // the embedding space's centroid, unscaled
  bool empty_space = true;
  auto add = [&](std::string_view text) -> absl::Status {
    BULWARK_ASSIGN_OR_RETURN(std::vector<float> e, options_.embedder->Embed(text));
    for (size_t i = 0; i < extracted_sum.size() && i < e.size(); ++i) extracted_sum[i] += e[i];
    empty_space = false;
    return absl::OkStatus();
  };
  for (int t = 0; t < budget.queries; ++t) {
    const std::vector<float> goal = Target(extracted_sum, empty_space, rng);
    BULWARK_ASSIGN_OR_RETURN(std::vector<std::string> suffix, Suffix(goal, rng));
    BULWARK_ASSIGN_OR_RETURN(const AttackStep* step, recorder.Send(DgeaQuery(suffix)));
    BULWARK_RETURN_IF_ERROR(add(step->query));
    for (const RetrievedText* hit : recorder.new_hits()) {
      BULWARK_RETURN_IF_ERROR(add(hit->text));
    }
  }
  return std::move(recorder).Finish();
}

}  // namespace bulwark::extraction
