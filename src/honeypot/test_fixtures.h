// Test-only synthetic embedding fixture for the MemPot units: memories in a few tight topic
// clusters, benign queries near the memories, attack queries around directions far from every
// memory (the out-of-distribution "instruction-style" queries of research/mempot.md 5.6).
#pragma once

#include <random>

#include "honeypot/pot_math.h"

namespace bulwark::honeypot::testing {

struct SyntheticSpace {
  RowMatrixXf memories;
  RowMatrixXf benign;
  RowMatrixXf attack;
};

inline RowMatrixXf NoisyAround(const RowMatrixXf& centres, int count, float noise, std::mt19937& rng) {
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(centres.rows()) - 1);
  RowMatrixXf out(count, centres.cols());
  for (int i = 0; i < count; ++i) {
    out.row(i) = centres.row(pick(rng));
    for (Eigen::Index j = 0; j < out.cols(); ++j) out(i, j) += noise * gauss(rng);
  }
  NormalizeRows(out);
  return out;
}

inline RowMatrixXf RandomUnit(int count, int dim, std::mt19937& rng) {
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  RowMatrixXf out(count, dim);
  for (Eigen::Index i = 0; i < out.size(); ++i) out.data()[i] = gauss(rng);
  NormalizeRows(out);
  return out;
}

// `topics` memory topics and 2 attack directions in dimension `dim`.
inline SyntheticSpace MakeSyntheticSpace(int dim, int topics, int memories, int benign, int attack,
                                         uint32_t seed = 7) {
  std::mt19937 rng(seed);
  const RowMatrixXf topic_centres = RandomUnit(topics, dim, rng);
  const RowMatrixXf attack_centres = RandomUnit(2, dim, rng);
  SyntheticSpace s;
  s.memories = NoisyAround(topic_centres, memories, 0.35f / std::sqrt(static_cast<float>(dim)) * 4, rng);
  s.benign = NoisyAround(topic_centres, benign, 0.5f / std::sqrt(static_cast<float>(dim)) * 4, rng);
  s.attack = NoisyAround(attack_centres, attack, 0.5f / std::sqrt(static_cast<float>(dim)) * 4, rng);
  return s;
}

}  // namespace bulwark::honeypot::testing
