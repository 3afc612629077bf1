// The exact (hard) top-k pot score of MemPot Eq. 9 and the per-query observation it implies, for
// a set of queries against an augmented index E_aug = memories U pots. The memories never move,
// so their top-k scores per query are computed once (TopKScores) and each evaluation only scans
// the pots: pot j is in T_k(q) iff s(q, u_j) beats the k-th best of the merged list. On a tie a
// memory ranks first (pots lose ties), matching an index that breaks ties by insertion order with
// the memories inserted before the pots.
#pragma once

#include <vector>

#include "honeypot/pot_math.h"

namespace bulwark::honeypot {

// The k largest inner products of each query row with the rows of `items`, descending, in a
// Q x k matrix; a query with fewer than k items gets -infinity in the missing places. Blocked
// GEMM: O(Q N d) time, O(256 N) extra memory. Precondition: k >= 1, equal column counts.
Eigen::MatrixXf TopKScores(const RowMatrixXf& queries, const RowMatrixXf& items, int k);

struct PotObservation {
  // g_k(q) of Eq. 9: (1/k) sum of s(q, u_j) over the pots inside T_k(q).
  std::vector<double> score;
  // |T_k(q) ∩ P|: the number of pots among the top k (the count the monitor observes).
  std::vector<int> pots_in_top_k;
};

// Eq. 9 for every query row, with `memory_top_k` = TopKScores(queries, memories, k) and `pots`
// P x d unit rows. O(Q P d).
PotObservation HardPotScores(const RowMatrixXf& queries, const Eigen::MatrixXf& memory_top_k,
                             const RowMatrixXf& pots, int k);

}  // namespace bulwark::honeypot
