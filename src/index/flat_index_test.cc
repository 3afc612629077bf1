// FlatIndex: the SIMD scan against a brute-force oracle (score every row, sort, cut at k), the
// add/set-state/remove semantics including swap-remove, and every error the interface promises.
#include "index/flat_index.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint32_t kAllStates = 0xffffffffu;
constexpr uint32_t kAllKinds = 0xffffffffu;

uint32_t Bit(State s) { return 1u << static_cast<int>(s); }
uint32_t Bit(Kind k) { return 1u << static_cast<int>(k); }

struct ModelRow {
  std::vector<float> vector;
  State state;
  Kind kind;
};

// The index as a plain map, searched by scoring every row with `dot` and sorting.
using Model = std::map<int64_t, ModelRow>;

std::vector<IndexHit> BruteForce(const Model& model, const std::vector<float>& query, int k,
                                 const IndexFilter& filter, const InnerProductKernels& kernels) {
  std::vector<IndexHit> all;
  for (const auto& [id, row] : model) {
    if (!filter.Accepts(row.state, row.kind)) continue;
    float score = kernels.dot(query.data(), row.vector.data(), query.size());
    if (std::isnan(score)) score = -std::numeric_limits<float>::infinity();
    all.push_back({id, score});
  }
  std::sort(all.begin(), all.end(), [](const IndexHit& a, const IndexHit& b) {
    return a.score > b.score || (a.score == b.score && a.row_id < b.row_id);
  });
  if (all.size() > static_cast<size_t>(k)) all.resize(k);
  return all;
}

std::unique_ptr<FlatIndex> MakeIndex(int dimension, SimdLevel level = BestSimdLevel()) {
  absl::StatusOr<std::unique_ptr<FlatIndex>> index = FlatIndex::Create(dimension, level);
  EXPECT_TRUE(index.ok()) << index.status();
  return std::move(index).value();
}

std::unique_ptr<FlatIndex> MakeIndex(int dimension, SimdLevel level, ScanMode mode) {
  absl::StatusOr<std::unique_ptr<FlatIndex>> index = FlatIndex::Create(dimension, level, mode);
  EXPECT_TRUE(index.ok()) << index.status();
  return std::move(index).value();
}

std::vector<int64_t> Ids(const std::vector<IndexHit>& hits) {
  std::vector<int64_t> ids;
  for (const IndexHit& hit : hits) ids.push_back(hit.row_id);
  return ids;
}

void ExpectSameHits(const std::vector<IndexHit>& got, const std::vector<IndexHit>& want,
                    const std::string& context) {
  ASSERT_EQ(got.size(), want.size()) << context;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].row_id, want[i].row_id) << context << " rank " << i;
    EXPECT_EQ(got[i].score, want[i].score) << context << " rank " << i;
  }
}

// Searches with every k and filter given and checks each answer against the brute force over
// `model`, which scores with the same level's `dot`: rows, scores and order must agree exactly.
void ExpectMatchesBruteForce(const FlatIndex& index, const Model& model, const std::vector<float>& query,
                             const std::vector<int>& ks, const std::vector<IndexFilter>& filters,
                             const InnerProductKernels& kernels, const std::string& context) {
  for (int k : ks) {
    for (size_t f = 0; f < filters.size(); ++f) {
      const std::string where = context + " k=" + std::to_string(k) + " filter " + std::to_string(f);
      auto hits = index.Search(query, k, filters[f]);
      ASSERT_TRUE(hits.ok()) << where << ": " << hits.status();
      ExpectSameHits(*hits, BruteForce(model, query, k, filters[f], kernels), where);
    }
  }
}

const std::vector<IndexFilter> kFilters = {
    IndexFilter{},                       // active memories
    IndexFilter{kAllStates, kAllKinds},  // everything
    IndexFilter{0, kAllKinds},           // nothing
    IndexFilter{Bit(State::kActive) | Bit(State::kQuarantined), Bit(Kind::kMemory)},
    IndexFilter{kAllStates, Bit(Kind::kHoneypot)},
};

// ---------------------------------------------------------------------------------------------
// Errors

TEST(FlatIndexTest, CreateRejectsBadDimensions) {
  for (int dimension : {0, -1, FlatIndex::kMaxDimension + 1}) {
    EXPECT_EQ(FlatIndex::Create(dimension).status().code(), absl::StatusCode::kInvalidArgument) << dimension;
  }
  ASSERT_THAT(FlatIndex::Create(1), IsOk());
  ASSERT_THAT(FlatIndex::Create(FlatIndex::kMaxDimension), IsOk());
}

TEST(FlatIndexTest, CreateWithUnsupportedLevelFails) {
  for (SimdLevel level : {SimdLevel::kScalar, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    absl::StatusOr<std::unique_ptr<FlatIndex>> index = FlatIndex::Create(8, level);
    if (CpuSupports(level)) {
      ASSERT_THAT(index, IsOk());
      EXPECT_EQ((*index)->simd_level(), level);
    } else {
      EXPECT_EQ(index.status().code(), absl::StatusCode::kFailedPrecondition);
    }
  }
}

TEST(FlatIndexTest, AddRejectsWrongDimensionAndDuplicateId) {
  auto index = MakeIndex(4);
  const std::vector<float> three = {1, 2, 3};
  const std::vector<float> four = {1, 2, 3, 4};
  const std::vector<float> five = {1, 2, 3, 4, 5};
  EXPECT_EQ(index->Add(1, three, State::kActive, Kind::kMemory).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Add(1, five, State::kActive, Kind::kMemory).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Add(1, {}, State::kActive, Kind::kMemory).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->size(), 0u);
  ASSERT_THAT(index->Add(1, four, State::kActive, Kind::kMemory), IsOk());
  EXPECT_EQ(index->Add(1, four, State::kQuarantined, Kind::kHoneypot).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(index->size(), 1u);
  // The failed duplicate did not change the stored row.
  auto hits = index->Search(four, 5, IndexFilter{});
  ASSERT_THAT(hits, IsOk());
  EXPECT_THAT(Ids(*hits), ElementsAre(1));
}

TEST(FlatIndexTest, AddAndSetStateRejectUnknownEnumerators) {
  auto index = MakeIndex(2);
  const std::vector<float> v = {1, 0};
  EXPECT_EQ(index->Add(1, v, static_cast<State>(40), Kind::kMemory).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Add(1, v, State::kActive, static_cast<Kind>(7)).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_THAT(index->Add(1, v, State::kActive, Kind::kMemory), IsOk());
  EXPECT_EQ(index->SetState(1, static_cast<State>(99)).code(), absl::StatusCode::kInvalidArgument);
}

TEST(FlatIndexTest, MissingIdsAreNotFound) {
  auto index = MakeIndex(2);
  EXPECT_EQ(index->SetState(7, State::kDeleted).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(index->Remove(7).code(), absl::StatusCode::kNotFound);
  ASSERT_THAT(index->Add(7, std::vector<float>{1, 1}, State::kActive, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Remove(7), IsOk());
  EXPECT_EQ(index->Remove(7).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(index->SetState(7, State::kActive).code(), absl::StatusCode::kNotFound);
}

TEST(FlatIndexTest, StateOfFollowsAddSetStateAndRemove) {
  auto index = MakeIndex(2);
  EXPECT_EQ(index->StateOf(3), std::nullopt);
  ASSERT_THAT(index->Add(3, std::vector<float>{1, 0}, State::kActive, Kind::kHoneypot), IsOk());
  ASSERT_THAT(index->Add(4, std::vector<float>{0, 1}, State::kActive, Kind::kMemory), IsOk());
  EXPECT_EQ(index->StateOf(3), std::pair(State::kActive, Kind::kHoneypot));
  ASSERT_THAT(index->SetState(4, State::kQuarantined), IsOk());
  EXPECT_EQ(index->StateOf(4), std::pair(State::kQuarantined, Kind::kMemory));
  ASSERT_THAT(index->Remove(3), IsOk());  // row 4 moves into row 3's position
  EXPECT_EQ(index->StateOf(3), std::nullopt);
  EXPECT_EQ(index->StateOf(4), std::pair(State::kQuarantined, Kind::kMemory));
}

TEST(FlatIndexTest, SearchRejectsWrongDimensionAndNegativeK) {
  auto index = MakeIndex(3);
  ASSERT_THAT(index->Add(1, std::vector<float>{1, 0, 0}, State::kActive, Kind::kMemory), IsOk());
  EXPECT_EQ(index->Search(std::vector<float>{1, 0}, 1, IndexFilter{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Search(std::vector<float>{1, 0, 0, 0}, 1, IndexFilter{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(index->Search(std::vector<float>{1, 0, 0}, -1, IndexFilter{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(FlatIndexTest, ReserveRejectsImpossibleSizes) {
  auto index = MakeIndex(384);
  EXPECT_THAT(index->Reserve(1000), IsOk());
  EXPECT_EQ(index->Reserve(std::numeric_limits<size_t>::max() / 2).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(index->size(), 0u);
}

// ---------------------------------------------------------------------------------------------
// Semantics

TEST(FlatIndexTest, KZeroAndEmptyIndexGiveNoHits) {
  auto index = MakeIndex(2);
  const std::vector<float> q = {1, 0};
  auto empty = index->Search(q, 5, IndexFilter{});
  ASSERT_THAT(empty, IsOk());
  EXPECT_THAT(*empty, IsEmpty());
  ASSERT_THAT(index->Add(1, q, State::kActive, Kind::kMemory), IsOk());
  auto none = index->Search(q, 0, IndexFilter{});
  ASSERT_THAT(none, IsOk());
  EXPECT_THAT(*none, IsEmpty());
}

TEST(FlatIndexTest, DefaultFilterReturnsOnlyActiveMemoriesBestFirst) {
  auto index = MakeIndex(2);
  ASSERT_THAT(index->Add(10, std::vector<float>{1, 0}, State::kActive, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Add(11, std::vector<float>{0.5f, 0}, State::kActive, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Add(12, std::vector<float>{2, 0}, State::kQuarantined, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Add(13, std::vector<float>{3, 0}, State::kActive, Kind::kHoneypot), IsOk());
  ASSERT_THAT(index->Add(14, std::vector<float>{-1, 0}, State::kActive, Kind::kMemory), IsOk());
  const std::vector<float> q = {1, 0};

  auto hits = index->Search(q, 10, IndexFilter{});
  ASSERT_THAT(hits, IsOk());
  EXPECT_THAT(Ids(*hits), ElementsAre(10, 11, 14));  // fewer than k pass
  EXPECT_EQ((*hits)[0].score, 1.0f);
  EXPECT_EQ((*hits)[2].score, -1.0f);

  auto all = index->Search(q, 10, IndexFilter{kAllStates, kAllKinds});
  ASSERT_THAT(all, IsOk());
  EXPECT_THAT(Ids(*all), ElementsAre(13, 12, 10, 11, 14));

  auto top2 = index->Search(q, 2, IndexFilter{kAllStates, kAllKinds});
  ASSERT_THAT(top2, IsOk());
  EXPECT_THAT(Ids(*top2), ElementsAre(13, 12));
}

TEST(FlatIndexTest, SetStateChangesWhatPassesTheFilter) {
  auto index = MakeIndex(2);
  ASSERT_THAT(index->Add(1, std::vector<float>{1, 0}, State::kActive, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Add(2, std::vector<float>{0.5f, 0}, State::kActive, Kind::kMemory), IsOk());
  const std::vector<float> q = {1, 0};
  ASSERT_THAT(index->SetState(1, State::kQuarantined), IsOk());
  EXPECT_THAT(Ids(*index->Search(q, 5, IndexFilter{})), ElementsAre(2));
  EXPECT_THAT(Ids(*index->Search(q, 5, IndexFilter{Bit(State::kQuarantined), kAllKinds})), ElementsAre(1));
  ASSERT_TRUE(index->SetState(1, State::kActive).ok());  // release
  EXPECT_THAT(Ids(*index->Search(q, 5, IndexFilter{})), ElementsAre(1, 2));
  EXPECT_EQ(index->size(), 2u);  // size counts rows whatever their state
  ASSERT_THAT(index->SetState(2, State::kDeleted), IsOk());
  EXPECT_EQ(index->size(), 2u);
  EXPECT_THAT(Ids(*index->Search(q, 5, IndexFilter{})), ElementsAre(1));
}

TEST(FlatIndexTest, RemoveMovesTheLastRowIntoTheHole) {
  auto index = MakeIndex(3);
  for (int64_t id = 0; id < 5; ++id) {
    const float x = static_cast<float>(id);
    ASSERT_THAT(index->Add(id, std::vector<float>{x, 1, -x}, State::kActive, Kind::kMemory), IsOk());
  }
  ASSERT_THAT(index->SetState(4, State::kQuarantined), IsOk());
  ASSERT_TRUE(index->Remove(1).ok());  // row 4 moves to position 1, keeping its vector and state
  EXPECT_EQ(index->size(), 4u);
  const std::vector<float> q = {1, 0, 0};
  EXPECT_THAT(Ids(*index->Search(q, 10, IndexFilter{})), ElementsAre(3, 2, 0));
  auto quarantined = index->Search(q, 10, IndexFilter{Bit(State::kQuarantined), kAllKinds});
  ASSERT_THAT(quarantined, IsOk());
  ASSERT_THAT(Ids(*quarantined), ElementsAre(4));
  EXPECT_EQ((*quarantined)[0].score, 4.0f);
  // The moved row can be changed and removed by id; the removed id can be added again.
  ASSERT_THAT(index->SetState(4, State::kActive), IsOk());
  EXPECT_THAT(Ids(*index->Search(q, 10, IndexFilter{})), ElementsAre(4, 3, 2, 0));
  ASSERT_THAT(index->Remove(4), IsOk());
  ASSERT_THAT(index->Add(1, std::vector<float>{9, 0, 0}, State::kActive, Kind::kMemory), IsOk());
  EXPECT_THAT(Ids(*index->Search(q, 10, IndexFilter{})), ElementsAre(1, 3, 2, 0));
  for (int64_t id : {0, 1, 2, 3}) ASSERT_TRUE(index->Remove(id).ok());
  EXPECT_EQ(index->size(), 0u);
  EXPECT_THAT(*index->Search(q, 10, IndexFilter{kAllStates, kAllKinds}), IsEmpty());
}

TEST(FlatIndexTest, TiesGoToTheLowerRowId) {
  auto index = MakeIndex(2);
  // Added in descending id order, so positions and ids disagree.
  for (int64_t id : {50, 40, 30, 20, 10}) {
    ASSERT_THAT(index->Add(id, std::vector<float>{1, 1}, State::kActive, Kind::kMemory), IsOk());
  }
  ASSERT_THAT(index->Add(5, std::vector<float>{0, 1}, State::kActive, Kind::kMemory), IsOk());
  auto hits = index->Search(std::vector<float>{1, 1}, 3, IndexFilter{});
  ASSERT_THAT(hits, IsOk());
  EXPECT_THAT(Ids(*hits), ElementsAre(10, 20, 30));
}

TEST(FlatIndexTest, NanScoresRankLast) {
  auto index = MakeIndex(2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ASSERT_THAT(index->Add(1, std::vector<float>{nan, 0}, State::kActive, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Add(2, std::vector<float>{-1, 0}, State::kActive, Kind::kMemory), IsOk());
  ASSERT_THAT(index->Add(3, std::vector<float>{1, 0}, State::kActive, Kind::kMemory), IsOk());
  auto hits = index->Search(std::vector<float>{1, 0}, 3, IndexFilter{});
  ASSERT_THAT(hits, IsOk());
  ASSERT_THAT(Ids(*hits), ElementsAre(3, 2, 1));
  EXPECT_EQ((*hits)[2].score, -std::numeric_limits<float>::infinity());
}

// The documented contract: const searches may run concurrently (no writer at the same time), so
// Search must keep no shared scratch state.
TEST(FlatIndexTest, ConcurrentSearchesGiveTheSameResults) {
  constexpr int kDimension = 64;
  auto index = MakeIndex(kDimension);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(kDimension);
  for (int64_t id = 0; id < 2000; ++id) {
    for (float& x : v) x = uniform(rng);
    ASSERT_THAT(index->Add(id, v, State::kActive, Kind::kMemory), IsOk());
  }
  std::vector<std::vector<float>> queries(8, std::vector<float>(kDimension));
  std::vector<std::vector<IndexHit>> expected;
  for (auto& q : queries) {
    for (float& x : q) x = uniform(rng);
    expected.push_back(*index->Search(q, 10, IndexFilter{}));
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        const size_t i = static_cast<size_t>(round + t) % queries.size();
        auto hits = index->Search(queries[i], 10, IndexFilter{});
        if (!hits.ok() || Ids(*hits) != Ids(expected[i])) ++mismatches[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ElementsAre(0, 0, 0, 0));
}

TEST(FlatIndexTest, DefaultScanModeFollowsTheCpu) {
  auto index = MakeIndex(384);
  EXPECT_EQ(index->scan_mode(), BestSimdLevel() == SimdLevel::kAvx512 && Int8Rows::CpuHasVnni()
                                    ? ScanMode::kInt8Bounded
                                    : ScanMode::kExact);
  EXPECT_EQ(MakeIndex(384, SimdLevel::kScalar)->scan_mode(), ScanMode::kExact);
  EXPECT_EQ(MakeIndex(384, SimdLevel::kScalar, ScanMode::kInt8Bounded)->scan_mode(), ScanMode::kInt8Bounded);
}

// ---------------------------------------------------------------------------------------------
// Oracle tests, for every kernel level the CPU supports and both scan modes. The oracle scores
// with `dot` of the same level, so the bounded scan must return exactly the exact scan's rows,
// scores and order, ties and near-ties included.

using OracleParam = std::tuple<SimdLevel, ScanMode>;

class FlatIndexOracleTest : public ::testing::TestWithParam<OracleParam> {
 protected:
  void SetUp() override {
    if (!CpuSupports(level())) GTEST_SKIP() << "CPU lacks " << ToString(level());
  }
  SimdLevel level() const { return std::get<0>(GetParam()); }
  ScanMode mode() const { return std::get<1>(GetParam()); }
  std::unique_ptr<FlatIndex> Make(int dimension) const { return MakeIndex(dimension, level(), mode()); }
};

// Random real-valued vectors: the scan returns exactly the brute-force ranking and scores (the
// kernels are bit-identical row by row), and the scores are correct to float accuracy.
TEST_P(FlatIndexOracleTest, SearchMatchesBruteForce) {
  const InnerProductKernels& kernels = KernelsFor(level());
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int dimension : {1, 7, 17, 384}) {
    for (size_t n : {1ul, 3ul, 5ul, 127ul, 128ul, 129ul, 1000ul}) {
      auto index = Make(dimension);
      Model model;
      std::vector<int64_t> ids(n);
      for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int64_t>(i * 7919 % 100003);  // unordered
      for (size_t i = 0; i < n; ++i) {
        ModelRow row{std::vector<float>(dimension), State::kActive, Kind::kMemory};
        for (float& x : row.vector) x = uniform(rng);
        const uint32_t r = rng();
        if (r % 5 == 0) row.state = static_cast<State>(1 + r / 5 % 3);
        if (r % 7 == 0) row.kind = Kind::kHoneypot;
        ASSERT_THAT(index->Add(ids[i], row.vector, row.state, row.kind), IsOk());
        model[ids[i]] = row;
      }
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<float> query(dimension);
        for (float& x : query) x = uniform(rng);
        for (int k : {1, 3, 10, static_cast<int>(n), static_cast<int>(n) + 5}) {
          for (size_t f = 0; f < kFilters.size(); ++f) {
            const std::string context = "d=" + std::to_string(dimension) + " n=" + std::to_string(n) +
                                        " k=" + std::to_string(k) + " filter " + std::to_string(f);
            auto hits = index->Search(query, k, kFilters[f]);
            ASSERT_TRUE(hits.ok()) << context;
            ExpectSameHits(*hits, BruteForce(model, query, k, kFilters[f], kernels), context);
            for (const IndexHit& hit : *hits) {
              const std::vector<float>& v = model.at(hit.row_id).vector;
              double exact = 0, magnitude = 0;
              for (int i = 0; i < dimension; ++i) {
                exact += static_cast<double>(query[i]) * v[i];
                magnitude += std::fabs(static_cast<double>(query[i]) * v[i]);
              }
              EXPECT_NEAR(hit.score, exact, dimension * FLT_EPSILON * magnitude) << context;
            }
          }
        }
      }
    }
  }
}

// Vectors of -1/0/1 give exact integer scores and many ties, which must go to the lower row id.
TEST_P(FlatIndexOracleTest, TiesMatchBruteForce) {
  const InnerProductKernels& kernels = KernelsFor(level());
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> ternary(-1, 1);
  for (int dimension : {3, 16, 33}) {
    auto index = Make(dimension);
    Model model;
    for (int i = 0; i < 1500; ++i) {              // enough rows for the bounded scan
      const int64_t id = (i * 389) % 1500 - 750;  // negative ids too, in scrambled order
      ModelRow row{std::vector<float>(dimension), State::kActive, i % 4 ? Kind::kMemory : Kind::kHoneypot};
      for (float& x : row.vector) x = static_cast<float>(ternary(rng));
      ASSERT_THAT(index->Add(id, row.vector, row.state, row.kind), IsOk());
      model[id] = row;
    }
    for (int trial = 0; trial < 10; ++trial) {
      std::vector<float> query(dimension);
      for (float& x : query) x = static_cast<float>(ternary(rng));
      ExpectMatchesBruteForce(*index, model, query, {1, 5, 50, 700}, kFilters, kernels,
                              "d=" + std::to_string(dimension));
    }
  }
}

// A random mix of adds, state changes and removes; after each burst the index agrees with the model.
TEST_P(FlatIndexOracleTest, RandomMutationsMatchModel) {
  const InnerProductKernels& kernels = KernelsFor(level());
  constexpr int kDimension = 20;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto index = Make(kDimension);
  Model model;
  for (int burst = 0; burst < 40; ++burst) {
    for (int op = 0; op < 50; ++op) {
      const int64_t id = static_cast<int64_t>(rng() % 300);
      const bool present = model.count(id) > 0;
      switch (rng() % 4) {
        case 0:
        case 1: {
          ModelRow row{std::vector<float>(kDimension), static_cast<State>(rng() % 4),
                       static_cast<Kind>(rng() % 2)};
          for (float& x : row.vector) x = uniform(rng);
          const absl::Status status = index->Add(id, row.vector, row.state, row.kind);
          if (present) {
            ASSERT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
          } else {
            ASSERT_TRUE(status.ok()) << status;
            model[id] = row;
          }
          break;
        }
        case 2: {
          const State state = static_cast<State>(rng() % 4);
          const absl::Status status = index->SetState(id, state);
          ASSERT_EQ(status.code(), present ? absl::StatusCode::kOk : absl::StatusCode::kNotFound);
          if (present) model[id].state = state;
          break;
        }
        case 3: {
          const absl::Status status = index->Remove(id);
          ASSERT_EQ(status.code(), present ? absl::StatusCode::kOk : absl::StatusCode::kNotFound);
          model.erase(id);
          break;
        }
      }
    }
    ASSERT_EQ(index->size(), model.size());
    std::vector<float> query(kDimension);
    for (float& x : query) x = uniform(rng);
    ExpectMatchesBruteForce(*index, model, query, {1, 10, 400}, kFilters, kernels,
                            "burst " + std::to_string(burst));
  }
}

// Unit vectors in near-tie clusters: each cluster is one base vector plus perturbations of a few
// ulps in a few coordinates, so many scores differ only in the last bits (or not at all) -- the
// hardest case for a pre-scan whose bounds are wider than those differences. Exact duplicates are
// in there too. n is large enough that the bounded scan engages for k <= n / 16.
TEST_P(FlatIndexOracleTest, NearTiesMatchBruteForce) {
  const InnerProductKernels& kernels = KernelsFor(level());
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int dimension : {16, 384}) {
    auto index = Make(dimension);
    Model model;
    std::vector<float> base(dimension);
    for (int i = 0; i < 3000; ++i) {
      if (i % 300 == 0) {
        double norm = 0;
        for (float& x : base) {
          x = uniform(rng);
          norm += static_cast<double>(x) * x;
        }
        for (float& x : base) x = static_cast<float>(x / std::sqrt(norm));
      }
      ModelRow row{base, State::kActive, i % 11 ? Kind::kMemory : Kind::kHoneypot};
      if (i % 3 != 0) {  // every third row is an exact duplicate of its cluster's base
        for (int j = 0; j < 3; ++j) {
          float& x = row.vector[rng() % dimension];
          for (int ulps = static_cast<int>(rng() % 4); ulps > 0; --ulps) {
            x = std::nextafter(x, (rng() & 1) ? 1.0f : -1.0f);
          }
        }
      }
      const int64_t id = (i * 7919) % 3000;
      ASSERT_THAT(index->Add(id, row.vector, row.state, row.kind), IsOk());
      model[id] = row;
    }
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<float> query(dimension);
      if (trial < 3) {
        for (float& x : query) x = uniform(rng);
      } else {  // a query equal to a cluster base: its whole cluster near-ties at the top
        query = model.at(static_cast<int64_t>(rng() % 3000)).vector;
      }
      ExpectMatchesBruteForce(*index, model, query, {1, 5, 10, 100, 187}, kFilters, kernels,
                              "d=" + std::to_string(dimension) + " trial " + std::to_string(trial));
    }
  }
}

// Sparse rows and queries like the lexical embedder's, a zero query (every score ties at 0), and a
// few rows the int8 copy cannot bound (non-finite or huge values), which must still rank exactly.
TEST_P(FlatIndexOracleTest, SparseZeroAndUnboundedRowsMatchBruteForce) {
  const InnerProductKernels& kernels = KernelsFor(level());
  constexpr int kDimension = 384;
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto sparse = [&] {
    std::vector<float> v(kDimension, 0.0f);
    for (int i = 0; i < 30; ++i) v[rng() % kDimension] += uniform(rng);
    return v;
  };
  auto index = Make(kDimension);
  Model model;
  for (int64_t id = 0; id < 1500; ++id) {
    ModelRow row{sparse(), State::kActive, Kind::kMemory};
    if (id % 250 == 7) row.vector[rng() % kDimension] = std::numeric_limits<float>::infinity();
    if (id % 250 == 8) row.vector[rng() % kDimension] = 0x1p70f;
    if (id % 250 == 9) row.vector[rng() % kDimension] = std::numeric_limits<float>::quiet_NaN();
    if (id % 250 == 10) row.vector.assign(kDimension, 0.0f);
    ASSERT_THAT(index->Add(id, row.vector, row.state, row.kind), IsOk());
    model[id] = row;
  }
  for (int trial = 0; trial < 5; ++trial) {
    const std::vector<float> query = trial == 0 ? std::vector<float>(kDimension, 0.0f) : sparse();
    ExpectMatchesBruteForce(*index, model, query, {1, 5, 50}, {IndexFilter{}}, kernels,
                            "trial " + std::to_string(trial));
  }
}

// SearchRows: the brute force over the given rows only, for subsets small enough to be scored
// directly and large enough to be scanned with a mask; unknown and repeated ids are ignored.
TEST_P(FlatIndexOracleTest, SearchRowsMatchesBruteForceOverTheSubset) {
  const InnerProductKernels& kernels = KernelsFor(level());
  constexpr int kDimension = 48;
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto index = Make(kDimension);
  Model model;
  for (int64_t id = 0; id < 2000; ++id) {
    ModelRow row{std::vector<float>(kDimension), id % 9 ? State::kActive : State::kQuarantined,
                 id % 13 ? Kind::kMemory : Kind::kHoneypot};
    for (float& x : row.vector) x = uniform(rng);
    ASSERT_THAT(index->Add(id * 3, row.vector, row.state, row.kind), IsOk());
    model[id * 3] = row;
  }
  for (size_t subset : {0ul, 1ul, 7ul, 100ul, 124ul, 125ul, 700ul, 2000ul}) {
    std::vector<int64_t> ids;
    Model sub;
    for (size_t i = 0; i < subset; ++i) {
      const int64_t id = static_cast<int64_t>(rng() % 2000) * 3;
      ids.push_back(id);
      sub[id] = model.at(id);
    }
    ids.push_back(1);                              // not in the index
    ids.push_back(-30);                            // not in the index
    if (!ids.empty()) ids.push_back(ids.front());  // repeated
    std::vector<float> query(kDimension);
    for (float& x : query) x = uniform(rng);
    for (int k : {1, 5, 40}) {
      for (const IndexFilter& filter : kFilters) {
        auto hits = index->SearchRows(query, k, filter, ids);
        ASSERT_THAT(hits, IsOk());
        ExpectSameHits(*hits, BruteForce(sub, query, k, filter, kernels),
                       "subset " + std::to_string(subset) + " k=" + std::to_string(k));
      }
    }
  }
  EXPECT_EQ(
      index->SearchRows(std::vector<float>(3), 1, IndexFilter{}, std::vector<int64_t>{0}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// SearchWithSide: both lists are exactly what two Searches return (rows, scores, order), the side
// one cut below the k-th main hit, for a side class that is rare (honeypots, as the observation
// uses it), absent, or overlapping.
TEST_P(FlatIndexOracleTest, SearchWithSideEqualsTwoSearches) {
  constexpr int kDimension = 64;
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const IndexFilter pots{Bit(State::kActive), Bit(Kind::kHoneypot)};
  for (size_t n : {0ul, 40ul, 300ul, 3000ul}) {
    auto index = Make(kDimension);
    for (size_t i = 0; i < n; ++i) {
      std::vector<float> v(kDimension);
      for (size_t d = 0; d < v.size(); ++d) v[d] = rng() % 3 == 0 ? uniform(rng) : 0.0f;  // sparse
      const State state = i % 11 == 0 ? State::kQuarantined : State::kActive;
      ASSERT_THAT(index->Add(static_cast<int64_t>(i * 5 % 7919), v, state,
                             i % 33 == 0 ? Kind::kHoneypot : Kind::kMemory),
                  IsOk());
    }
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<float> query(kDimension);
      for (float& x : query) x = rng() % 4 == 0 ? uniform(rng) : 0.0f;
      for (const auto& [k, side_k] :
           std::vector<std::pair<int, int>>{{5, 4}, {30, 4}, {1, 64}, {0, 3}, {4, 0}}) {
        for (const IndexFilter& side_filter : {pots, IndexFilter{}, IndexFilter{0, kAllKinds}}) {
          const std::string context =
              "n=" + std::to_string(n) + " k=" + std::to_string(k) + " side_k=" + std::to_string(side_k);
          std::vector<IndexHit> side = {{-1, 0}};  // cleared by the call
          auto hits = index->SearchWithSide(query, k, IndexFilter{}, side_k, side_filter, &side);
          ASSERT_THAT(hits, IsOk()) << context;
          auto want = index->Search(query, k, IndexFilter{});
          auto want_side = index->Search(query, side_k, side_filter);
          ASSERT_THAT(want, IsOk());
          ASSERT_THAT(want_side, IsOk());
          if (k > 0 && want->size() == static_cast<size_t>(k)) {
            const float last = want->back().score;
            std::erase_if(*want_side, [last](const IndexHit& h) { return h.score < last; });
          }
          ExpectSameHits(*hits, *want, context);
          ExpectSameHits(side, *want_side, context + " side");
        }
      }
    }
    std::vector<IndexHit> side;
    EXPECT_EQ(index->SearchWithSide(std::vector<float>(kDimension), 1, IndexFilter{}, -1, pots, &side)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument);
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, FlatIndexOracleTest,
                         ::testing::Combine(::testing::Values(SimdLevel::kScalar, SimdLevel::kAvx2,
                                                              SimdLevel::kAvx512),
                                            ::testing::Values(ScanMode::kExact, ScanMode::kInt8Bounded)),
                         [](const ::testing::TestParamInfo<OracleParam>& info) {
                           return std::string(ToString(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == ScanMode::kExact ? "_exact" : "_int8");
                         });

}  // namespace
}  // namespace bulwark
