#include "honeypot/session_monitor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bulwark::honeypot {
namespace {

// An observation of k = 4 rows with `pots` pots first.
struct Obs {
  std::vector<RetrievedRow> rows;
  explicit Obs(int pots) {
    for (int i = 0; i < 4; ++i) rows.push_back({0.5f, i < pots});
  }
  Observation get() const { return Observation{rows, {}, {}}; }
};

std::unique_ptr<SessionMonitor> NewMonitor(MonitorOptions o = {}) {
  auto m = SessionMonitor::Create(o);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : nullptr;
}

TEST(SessionMonitorTest, AttackerIsBlockedAndStaysBlocked) {
  auto m = NewMonitor();
  const SessionKey key{"ns", "alice", "s1"};
  MonitorVerdict v = m->Observe(key, Obs(3).get(), 100);
  EXPECT_FALSE(v.blocked);
  EXPECT_EQ(v.pots, 3);
  EXPECT_NEAR(v.llr, 0.8473, 1e-4);
  m->Observe(key, Obs(3).get(), 200);
  v = m->Observe(key, Obs(3).get(), 300);
  EXPECT_TRUE(v.blocked);
  EXPECT_EQ(v.session, SprtDecision::kH1);
  EXPECT_EQ(v.principal, SprtDecision::kH1);
  EXPECT_TRUE(m->IsBlocked(key));
  EXPECT_TRUE(m->IsBlocked({"ns", "alice", "other-session"}));  // the principal level decided too
  EXPECT_FALSE(m->IsBlocked({"ns", "bob", "s1"}));
  EXPECT_FALSE(m->IsBlocked({"ns2", "alice", "s1"}));
  auto state = m->Get(key, KeyLevel::kSession);
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->sprt.decided_round, 3u);
  EXPECT_EQ(state->decided_at_us, 300);
  EXPECT_EQ(state->pot_hits, 9u);
  // Benign-looking rounds afterwards do not unblock.
  v = m->Observe(key, Obs(0).get(), 400);
  EXPECT_TRUE(v.blocked);
}

TEST(SessionMonitorTest, RotatingSessionIdsIsCaughtAtThePrincipalLevel) {
  auto m = NewMonitor();
  MonitorVerdict v;
  for (int t = 0; t < 3; ++t) {
    const std::string session = "rotating-" + std::to_string(t);
    v = m->Observe({"ns", "mallory", session}, Obs(3).get(), t);
    EXPECT_NE(v.session, SprtDecision::kH1);  // each session sees one round only
  }
  EXPECT_EQ(v.principal, SprtDecision::kH1);
  EXPECT_TRUE(v.blocked);
  EXPECT_TRUE(m->IsBlocked({"ns", "mallory", "fresh"}));
  // Scope "session" alone misses it.
  auto s = NewMonitor({.scope = MonitorScope::kSession});
  for (int t = 0; t < 3; ++t) v = s->Observe({"ns", "mallory", std::to_string(t)}, Obs(3).get(), t);
  EXPECT_FALSE(v.blocked);
}

TEST(SessionMonitorTest, NoSessionHeaderUsesThePrincipalOnly) {
  auto m = NewMonitor();
  m->Observe({"ns", "carol", ""}, Obs(1).get(), 1);
  EXPECT_FALSE(m->Get({"ns", "carol", ""}, KeyLevel::kSession).has_value());
  EXPECT_TRUE(m->Get({"ns", "carol", ""}, KeyLevel::kPrincipal).has_value());
  EXPECT_EQ(m->size(), 1u);
}

TEST(SessionMonitorTest, UnblockClearsOneLevel) {
  auto m = NewMonitor({.scope = MonitorScope::kPrincipal});
  const SessionKey key{"ns", "dave", "x"};
  m->Observe(key, Obs(4).get(), 1);
  ASSERT_TRUE(m->IsBlocked(key));
  EXPECT_EQ(m->Unblock({"ns", "nobody", ""}, KeyLevel::kPrincipal).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(m->Unblock(key, KeyLevel::kPrincipal).ok());
  EXPECT_FALSE(m->IsBlocked(key));
  EXPECT_EQ(m->Get(key, KeyLevel::kPrincipal)->sprt.statistic, 0.0);
}

TEST(SessionMonitorTest, FullTableEvictsIdleThenOldestButNeverBlocked) {
  auto m = NewMonitor({.scope = MonitorScope::kPrincipal, .max_keys = 4, .idle_ttl_us = 1000});
  m->Observe({"ns", "blocked", ""}, Obs(4).get(), 0);
  for (int i = 0; i < 3; ++i) m->Observe({"ns", "p" + std::to_string(i), ""}, Obs(2).get(), 10 + i);
  EXPECT_EQ(m->size(), 4u);
  // Nothing idle yet: the least recently seen unblocked key (p0) goes.
  m->Observe({"ns", "new", ""}, Obs(2).get(), 20);
  EXPECT_EQ(m->size(), 4u);
  EXPECT_FALSE(m->Get({"ns", "p0", ""}, KeyLevel::kPrincipal).has_value());
  EXPECT_TRUE(m->Get({"ns", "p1", ""}, KeyLevel::kPrincipal).has_value());
  // Much later everything unblocked is idle and goes at once; the blocked key stays.
  m->Observe({"ns", "late", ""}, Obs(2).get(), 1000000);
  EXPECT_EQ(m->size(), 2u);
  EXPECT_TRUE(m->IsBlocked({"ns", "blocked", ""}));
  // A table full of blocked keys tracks nothing new.
  auto b = NewMonitor({.scope = MonitorScope::kPrincipal, .max_keys = 1});
  b->Observe({"ns", "x", ""}, Obs(4).get(), 0);
  const MonitorVerdict v = b->Observe({"ns", "y", ""}, Obs(4).get(), 1);
  EXPECT_FALSE(v.tracked);
  EXPECT_FALSE(v.blocked);
  EXPECT_TRUE(b->IsBlocked({"ns", "x", ""}));
}

TEST(SessionMonitorTest, KeysDoNotCollide) {
  std::string a, b;
  AppendKeyBytes({"ab", "c", ""}, KeyLevel::kPrincipal, &a);
  AppendKeyBytes({"a", "bc", ""}, KeyLevel::kPrincipal, &b);
  EXPECT_NE(a, b);
}

TEST(SessionMonitorTest, SnapshotRoundTrip) {
  auto m = NewMonitor();
  m->Observe({"ns", "alice", "s1"}, Obs(4).get(), 5);
  m->Observe({"ns", "bob", "s2"}, Obs(1).get(), 6);
  m->Observe({"ns", "bob", ""}, Obs(0).get(), 7);
  const std::string bytes = m->Snapshot();
  auto n = NewMonitor();
  ASSERT_TRUE(n->Restore(bytes).ok());
  EXPECT_EQ(n->Snapshot(), bytes);
  EXPECT_EQ(n->size(), m->size());
  EXPECT_TRUE(n->IsBlocked({"ns", "alice", "s9"}));
  EXPECT_EQ(n->Get({"ns", "bob", "s2"}, KeyLevel::kSession), m->Get({"ns", "bob", "s2"}, KeyLevel::kSession));
}

TEST(SessionMonitorTest, CorruptSnapshotsAreRejectedAndChangeNothing) {
  auto m = NewMonitor();
  m->Observe({"ns", "alice", "s1"}, Obs(4).get(), 5);
  m->Observe({"ns", "bob", "s2"}, Obs(1).get(), 6);
  const std::string good = m->Snapshot();
  auto n = NewMonitor();
  n->Observe({"ns", "keep", ""}, Obs(1).get(), 1);
  const std::string before = n->Snapshot();
  // Every truncation, and every single-byte flip in the header, the lengths and the state bytes.
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_FALSE(n->Restore(good.substr(0, len)).ok()) << "truncated to " << len;
  }
  int rejected = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x80;
    const absl::Status s = n->Restore(bad);
    if (!s.ok()) {
      ++rejected;
      EXPECT_EQ(n->Snapshot(), before);
    } else {
      ASSERT_TRUE(n->Restore(before).ok());  // a flip in key text or a counter can be valid
    }
  }
  EXPECT_GT(rejected, 20);
  EXPECT_FALSE(n->Restore(good + "x").ok());
  auto small = NewMonitor({.max_keys = 1});
  EXPECT_EQ(small->Restore(good).code(), absl::StatusCode::kResourceExhausted);
}

TEST(SessionMonitorTest, KeyStateEncoding) {
  KeyState s;
  s.sprt = {.statistic = 1.25,
            .rounds = 9,
            .rounds_since_reset = 4,
            .h0_decisions = 2,
            .decided_round = 9,
            .h1 = true};
  s.pot_hits = 17;
  s.last_seen_us = 123456789;
  s.decided_at_us = 123456000;
  const std::string bytes = EncodeKeyState(s);
  ASSERT_EQ(bytes.size(), kEncodedKeyStateBytes);
  auto back = DecodeKeyState(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, s);
  KeyState inconsistent = s;
  inconsistent.sprt.decided_round = 0;  // decided without a round
  EXPECT_EQ(DecodeKeyState(EncodeKeyState(inconsistent)).status().code(), absl::StatusCode::kDataLoss);
  inconsistent = s;
  inconsistent.sprt.rounds_since_reset = 10;
  EXPECT_FALSE(DecodeKeyState(EncodeKeyState(inconsistent)).ok());
  inconsistent = s;
  inconsistent.sprt.statistic = std::nan("");
  EXPECT_FALSE(DecodeKeyState(EncodeKeyState(inconsistent)).ok());
  EXPECT_FALSE(DecodeKeyState(bytes.substr(1)).ok());
}

TEST(SessionMonitorTest, RejectsBadOptions) {
  EXPECT_FALSE(SessionMonitor::Create({.max_keys = 0}).ok());
  EXPECT_FALSE(SessionMonitor::Create({.idle_ttl_us = 0}).ok());
  MonitorOptions o;
  o.sprt.alpha = 2;
  EXPECT_FALSE(SessionMonitor::Create(o).ok());
  EXPECT_FALSE(ParseMonitorScope("all").ok());
}

}  // namespace
}  // namespace bulwark::honeypot
