// Reciprocal-rank fusion of several rankings (Cormack, Clarke & Buettcher 2009, "Reciprocal Rank
// Fusion outperforms Condorcet and individual rank learning methods", SIGIR): an item's fused
// score is the sum over the rankings that contain it of 1 / (k + rank), rank 1-based; k = 60 in
// the paper (not tuned here). Used by the retrieval evaluation to fuse the vector and BM25
// rankings (`bulwark-lab eval retrieval --ranking rrf`).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace bulwark::eval {

// The fused ranking of the items of `rankings` (each best first, items distinct within one
// ranking), best first, at most `depth` items (all for depth < 0). Equal fused scores keep the
// order in which items first appear when the rankings are read one after the other. k < 0 is
// treated as 0.
std::vector<int64_t> ReciprocalRankFusion(std::span<const std::vector<int64_t>> rankings, double k,
                                          int depth);

}  // namespace bulwark::eval
