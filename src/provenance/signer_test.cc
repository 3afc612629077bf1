// Tests of the provenance tag: RFC 4231 known answers for the HMAC the signer uses, the canonical
// encoding byte by byte (checked against a tag computed independently of this code), tamper
// detection for every signed field, injectivity of the length-prefixed encoding, and rotation.
#include "provenance/signer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bulwark/env.h"
#include "core/hex.h"
#include "testing/counting_env.h"
#include "testing/status_matchers.h"

namespace bulwark {
namespace {

using ::bulwark::testing::IsOk;

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

using FakeEnv = testing::CountingEnv;

std::vector<uint8_t> Bytes(std::string_view s) { return {s.begin(), s.end()}; }

std::string HmacHex(std::span<const uint8_t> key, std::string_view message) {
  absl::StatusOr<std::string> tag = HmacSha256(key, message);
  EXPECT_TRUE(tag.ok()) << tag.status();
  return tag.ok() ? HexEncode(*tag) : "";
}

// RFC 4231 section 4: HMAC-SHA-256 test cases.
TEST(HmacSha256Test, Rfc4231TestCase1) {
  std::vector<uint8_t> key(20, 0x0b);
  EXPECT_EQ(HmacHex(key, "Hi There"), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

TEST(HmacSha256Test, Rfc4231TestCase2KeyShorterThanOutput) {
  EXPECT_EQ(HmacHex(Bytes("Jefe"), "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(HmacSha256Test, Rfc4231TestCase3) {
  std::vector<uint8_t> key(20, 0xaa);
  EXPECT_EQ(HmacHex(key, std::string(50, '\xdd')),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
}

TEST(HmacSha256Test, Rfc4231TestCase6KeyLongerThanBlock) {
  std::vector<uint8_t> key(131, 0xaa);
  EXPECT_EQ(HmacHex(key, "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HmacSha256Test, EmptyKeyAndMessage) {
  // Python: hmac.new(b"", b"", hashlib.sha256).hexdigest()
  EXPECT_EQ(HmacHex({}, ""), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

// The signer keeps keyed contexts per thread (signer.cc): reused, switched between more keys than
// it keeps, and on other threads, every tag must still be the known answer.
TEST(HmacSha256Test, ReusedContextsKeepGivingTheKnownAnswers) {
  struct Case {
    std::vector<uint8_t> key;
    std::string message;
    std::string hex;
  };
  const std::vector<Case> cases = {
      {std::vector<uint8_t>(20, 0x0b), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {Bytes("Jefe"), "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::vector<uint8_t>(20, 0xaa), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {std::vector<uint8_t>(131, 0xaa), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {{}, "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"},
  };
  auto run_all = [&] {
    for (int round = 0; round < 3; ++round) {
      for (const Case& c : cases) {
        EXPECT_EQ(HmacHex(c.key, c.message), c.hex);
        EXPECT_EQ(HmacHex(c.key, c.message), c.hex) << "same key twice in a row";
      }
    }
  };
  run_all();  // five keys: more than a thread keeps
  std::thread other(run_all);
  other.join();
}

Entry SampleEntry() {
  Entry e;
  e.id = "01J0000000000000000000000A";
  e.name_space = "ns";
  e.text = "hi";
  e.metadata = {{"b", 1}, {"a", "x"}};
  e.principal = "alice";
  e.source = Source::kAgent;
  e.kind = Kind::kMemory;
  e.state = State::kActive;
  e.created_at_us = 1700000000000000;
  e.updated_at_us = 1700000000000001;
  e.embedding = {1.0f, -0.5f};
  return e;
}

// One field as the documented format writes it, built here without the code under test.
std::string Field(std::string_view bytes) {
  std::string out;
  uint64_t n = bytes.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out.append(bytes);
  return out;
}

TEST(CanonicalEncodingTest, MatchesTheDocumentedBytes) {
  const std::string expected =
      std::string("bulwark.entry.v1") +                           // domain, no prefix
      std::string("\x01\x00\x00\x00\x00\x00\x00\x00", 8) + "1" +  // key_id, 8-byte LE length
      Field("ns") + Field("01J0000000000000000000000A") + Field("hi") +
      Field(R"({"a":"x","b":1})") +  // keys sorted, no spaces
      Field("alice") + Field("agent") + Field("memory") + Field("active") + Field("1700000000000000") +
      Field("1700000000000001") +
      Field(std::string("\x00\x00\x80\x3f\x00\x00\x00\xbf", 8));  // 1.0f, -0.5f little-endian
  EXPECT_EQ(HexEncode(CanonicalEncoding(SampleEntry(), 1)), HexEncode(expected));
}

// The metadata field as doc/entry_format.md defines it: nlohmann's dump(), or 0xFF + CBOR when
// dump refuses the value (a string that is not valid UTF-8).
std::string ReferenceMetadataBytes(const nlohmann::json& metadata) {
  try {
    return metadata.dump();
  } catch (const nlohmann::json::exception&) {
    std::string out(1, '\xff');
    nlohmann::json::to_cbor(metadata, out);
    return out;
  }
}

// Random JSON with the strings an encoder can get wrong: escapes, control bytes, DEL, multi-byte
// UTF-8, and now and then an invalid sequence (a lone byte, a truncated one, an overlong form, a
// surrogate, a code point past U+10FFFF) in a value or a key.
nlohmann::json RandomJson(std::mt19937& rng, int depth) {
  static const char* const kPieces[] = {"a",
                                        "Zz 9",
                                        "\"",
                                        "\\",
                                        "\n",
                                        "\t",
                                        "\x01",
                                        "\x1f",
                                        "\x7f",
                                        "/",
                                        "\xc3\xa9",
                                        "\xe2\x82\xac",
                                        "\xf0\x9f\x98\x80"};
  static const char* const kInvalid[] = {"\xff", "\xc3", "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                         "\x80"};
  auto text = [&] {
    std::string s;
    const int n = static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) s += kPieces[rng() % std::size(kPieces)];
    if (rng() % 40 == 0) s += kInvalid[rng() % std::size(kInvalid)];
    return s;
  };
  const unsigned kind = depth <= 0 ? 2 + rng() % 6 : rng() % 8;
  switch (kind) {
    case 0: {
      nlohmann::json object = nlohmann::json::object();
      for (unsigned i = rng() % 4; i > 0; --i) object[text()] = RandomJson(rng, depth - 1);
      return object;
    }
    case 1: {
      nlohmann::json array = nlohmann::json::array();
      for (unsigned i = rng() % 4; i > 0; --i) array.push_back(RandomJson(rng, depth - 1));
      return array;
    }
    case 2:
    case 3:
      return text();
    case 4:
      return static_cast<int64_t>(rng()) - (int64_t{1} << 31);
    case 5:
      return uint64_t{rng()} << 32 | rng();
    case 6: {
      static const double kDoubles[] = {0.0,     -0.0,     0.5,       1.0,         1e-5,
                                        3.14159, -2.5e300, 1.0 / 3.0, std::nan("")};
      return kDoubles[rng() % std::size(kDoubles)];
    }
    default:
      return rng() % 3 == 0 ? nlohmann::json(nullptr) : nlohmann::json(rng() % 2 == 0);
  }
}

// The encoder writes metadata and event details with JsonWriter where it can: the bytes must be
// dump()'s (or the CBOR fallback's) for every value, so existing tags keep verifying.
TEST(CanonicalEncodingTest, MetadataAndDetailBytesAreTheDocumentedOnes) {
  std::mt19937 rng(20261124);
  int fallbacks = 0;
  for (int i = 0; i < 3000; ++i) {
    nlohmann::json value = RandomJson(rng, 3);
    if (i % 2 == 0) value = nlohmann::json{{"metadata", value}, {"source", "agent"}, {"text", "x"}};
    const std::string want = ReferenceMetadataBytes(value);
    fallbacks += want.starts_with('\xff') ? 1 : 0;
    Entry e = SampleEntry();
    e.metadata = value;
    const std::string encoding = CanonicalEncoding(e, 1);
    const std::string before = std::string("bulwark.entry.v1") + Field("1") + Field("ns") +
                               Field("01J0000000000000000000000A") + Field("hi");
    ASSERT_EQ(HexEncode(encoding.substr(0, before.size() + 8 + want.size())), HexEncode(before + Field(want)))
        << i << ": " << HexEncode(want);
    HistoryEvent ev;
    ev.detail = value;
    const std::string event = EventEncoding(ev, 1);
    ASSERT_TRUE(event.ends_with(Field(want))) << i;
  }
  EXPECT_GT(fallbacks, 10) << "the invalid-UTF-8 fallback was exercised";
}

TEST(CanonicalEncodingTest, MetadataKeyOrderDoesNotMatter) {
  Entry a = SampleEntry(), b = SampleEntry();
  a.metadata = nlohmann::json::object();
  a.metadata["z"] = 1;
  a.metadata["a"] = {{"y", 2}, {"b", 3}};
  b.metadata = nlohmann::json::parse(R"({"a": {"b": 3, "y": 2}, "z": 1})");
  EXPECT_EQ(CanonicalEncoding(a, 1), CanonicalEncoding(b, 1));
}

TEST(CanonicalEncodingTest, LengthPrefixesMakeFieldBoundariesUnambiguous) {
  Entry a = SampleEntry(), b = SampleEntry();
  a.text = "ab";
  a.principal = "c";
  b.text = "a";
  b.principal = "bc";
  EXPECT_NE(CanonicalEncoding(a, 1), CanonicalEncoding(b, 1));

  // Also across adjacent fields of a different kind: namespace/id.
  Entry c = SampleEntry(), d = SampleEntry();
  c.name_space = "n";
  c.id = "s01J";
  d.name_space = "ns0";
  d.id = "1J";
  EXPECT_NE(CanonicalEncoding(c, 1), CanonicalEncoding(d, 1));
}

TEST(CanonicalEncodingTest, InvalidUtf8MetadataDoesNotThrowAndStaysDistinct) {
  Entry a = SampleEntry(), b = SampleEntry();
  a.metadata = {{"k", std::string("\xff\xfe")}};
  b.metadata = {{"k", std::string("\xff\xfd")}};
  std::string enc_a, enc_b;
  ASSERT_NO_THROW(enc_a = CanonicalEncoding(a, 1));
  ASSERT_NO_THROW(enc_b = CanonicalEncoding(b, 1));
  EXPECT_NE(enc_a, enc_b);
  // The metadata field (the 5th) starts with the 0xFF marker.
  const size_t meta_len_at = kEntryDomain.size() + Field("1").size() + Field("ns").size() +
                             Field("01J0000000000000000000000A").size() + Field("hi").size();
  EXPECT_EQ(enc_a[meta_len_at + 8], '\xff');
}

class SignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::path(::testing::TempDir()) / "signer_test.XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    absl::StatusOr<Keyring> keyring = Keyring::Create(dir_ / "keyring.json", &env_);
    ASSERT_TRUE(keyring.ok()) << keyring.status();
    keyring_ = std::move(*keyring);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Entry Signed() {
    Entry e = SampleEntry();
    signer_.Sign(&e);
    return e;
  }

  FakeEnv env_;  // key 1 is the bytes 00 01 ... 1f
  fs::path dir_;
  Keyring keyring_;
  Signer signer_{&keyring_};
};

TEST_F(SignerTest, SignThenVerify) {
  Entry e = Signed();
  EXPECT_EQ(e.key_id, 1u);
  EXPECT_EQ(e.tag.size(), kTagBytes);
  EXPECT_TRUE(signer_.Verify(e).ok()) << signer_.Verify(e);
}

TEST_F(SignerTest, TagMatchesAnIndependentComputation) {
  // Python, from doc/entry_format.md alone:
  //   enc = b"bulwark.entry.v1" + b"".join(struct.pack("<Q", len(f)) + f for f in fields)
  //   hmac.new(bytes(range(32)), enc, hashlib.sha256).hexdigest()
  HmacKey expected_key;
  for (size_t i = 0; i < expected_key.size(); ++i) expected_key[i] = static_cast<uint8_t>(i);
  ASSERT_EQ(*keyring_.Find(1), expected_key);
  EXPECT_EQ(HexEncode(Signed().tag), "affe443a64732610f811733cd851ccf43c90889c22ebb3cc33ec6fd318d330d4");
}

HistoryEvent SampleEvent() {
  HistoryEvent ev;
  ev.seq = 7;
  ev.entry_id = "01J0000000000000000000000A";
  ev.name_space = "ns";
  ev.event = "add";
  ev.actor = "alice";
  ev.at_us = 1700000000000000;
  ev.detail = {{"text", "hi"}, {"metadata", nlohmann::json::object()}};
  return ev;
}

TEST_F(SignerTest, HistoryEventTagMatchesAnIndependentComputation) {
  // Python, from doc/entry_format.md ("History events") alone:
  //   fields = [b"1", b"ns", b"01J0000000000000000000000A", b"add", b"alice", b"1700000000000000",
  //             b'{"metadata":{},"text":"hi"}']
  //   enc = b"bulwark.history.v1" + b"".join(struct.pack("<Q", len(f)) + f for f in fields)
  HistoryEvent ev = SampleEvent();
  EXPECT_EQ(HexEncode(EventEncoding(ev, 1)),
            "62756c7761726b2e686973746f72792e763101000000000000003102000000000000006e731a000000000000003031"
            "4a303030303030303030303030303030303030303030304103000000000000006164640500000000000000616c6963"
            "651000000000000000313730303030303030303030303030301b000000000000007b226d65746164617461223a7b7d"
            "2c2274657874223a226869227d");
  signer_.Sign(&ev);
  EXPECT_EQ(ev.key_id, 1u);
  EXPECT_EQ(HexEncode(ev.tag), "38e441ced62a506c327adf2f2a6b1ecce5d5cd226f6c51befc980f4a0eb59a0b");
  EXPECT_THAT(signer_.Verify(ev), IsOk());
}

// Empty metadata is encoded without nlohmann's serializer ("{}" directly): the same bytes and the
// same tag as the documented format gives.
TEST_F(SignerTest, EmptyMetadataTagMatchesAnIndependentComputation) {
  // Python: the fields of TagMatchesAnIndependentComputation with b"{}" as the metadata.
  Entry e = SampleEntry();
  e.metadata = nlohmann::json::object();
  EXPECT_EQ(HexEncode(CanonicalEncoding(e, 1)).substr(0, 2 * 16), HexEncode("bulwark.entry.v1"));
  EXPECT_NE(CanonicalEncoding(e, 1).find(Field("{}")), std::string::npos);
  signer_.Sign(&e);
  EXPECT_EQ(HexEncode(e.tag), "9259f2d5228e999c33c2c9518faa83b6ad382efc5e31df990eea8ef8d2316ab3");
  EXPECT_THAT(signer_.Verify(e), IsOk());
}

// Sign and Verify encode into a buffer their thread reuses: tags must equal the HMAC of the
// standalone encodings whatever was encoded before (a long entry, then short ones; events and
// entries interleaved; verification between signatures).
TEST_F(SignerTest, ReusedEncodingBufferGivesTheStandaloneTags) {
  const std::shared_ptr<const HmacKey> key = keyring_.Find(1);
  ASSERT_NE(key, nullptr);
  for (int i = 0; i < 12; ++i) {
    Entry e = SampleEntry();
    e.text = std::string(static_cast<size_t>((11 - i) * 300 + 1), static_cast<char>('a' + i));
    if (i % 3 == 0) e.metadata = nlohmann::json::object();
    if (i % 4 == 1) e.metadata = {{"k", std::string(static_cast<size_t>(i * 50), 'm')}};
    e.embedding.assign(static_cast<size_t>(i % 5) * 64, 0.25f * static_cast<float>(i));
    signer_.Sign(&e);
    absl::StatusOr<std::string> want = HmacSha256(*key, CanonicalEncoding(e, 1));
    ASSERT_THAT(want, IsOk());
    EXPECT_EQ(HexEncode(e.tag), HexEncode(*want)) << i;
    EXPECT_THAT(signer_.Verify(e), IsOk()) << i;

    HistoryEvent ev = SampleEvent();
    ev.detail = {{"text", e.text.substr(0, static_cast<size_t>(i) * 7)}, {"metadata", e.metadata}};
    signer_.Sign(&ev);
    absl::StatusOr<std::string> want_event = HmacSha256(*key, EventEncoding(ev, 1));
    ASSERT_THAT(want_event, IsOk());
    EXPECT_EQ(HexEncode(ev.tag), HexEncode(*want_event)) << i;
    EXPECT_THAT(signer_.Verify(ev), IsOk()) << i;
    e.text.back() ^= 1;  // and a changed entry still fails after the buffer held its bytes
    EXPECT_FALSE(signer_.Verify(e).ok()) << i;
  }
}

TEST_F(SignerTest, ChangingASignedHistoryFieldFailsVerification) {
  const std::vector<std::pair<std::string, std::function<void(HistoryEvent*)>>> tampers = {
      {"namespace", [](HistoryEvent* e) { e->name_space = "other"; }},
      {"entry_id", [](HistoryEvent* e) { e->entry_id[25] = 'B'; }},
      {"event", [](HistoryEvent* e) { e->event = "release"; }},
      {"actor", [](HistoryEvent* e) { e->actor = "mallory"; }},
      {"at_us", [](HistoryEvent* e) { ++e->at_us; }},
      {"detail", [](HistoryEvent* e) { e->detail["text"] = "ho"; }},
      {"key_id", [](HistoryEvent* e) { e->key_id = e->key_id == 1 ? 2 : 1; }},
      {"tag", [](HistoryEvent* e) { e->tag[0] ^= 1; }},
  };
  ASSERT_TRUE(keyring_.Rotate(&env_).ok());  // key 2 exists, so a changed key id is a wrong tag
  for (const auto& [field, apply] : tampers) {
    HistoryEvent ev = SampleEvent();
    signer_.Sign(&ev);
    ASSERT_THAT(signer_.Verify(ev), IsOk());
    apply(&ev);
    const absl::Status status = signer_.Verify(ev);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << field;
    EXPECT_THAT(std::string(status.message()), HasSubstr("history event 7 (")) << field;
  }
  HistoryEvent moved = SampleEvent();
  signer_.Sign(&moved);
  moved.seq = 8;  // seq is the database's, not signed
  EXPECT_THAT(signer_.Verify(moved), IsOk());
  HistoryEvent unsigned_event = SampleEvent();
  EXPECT_THAT(std::string(signer_.Verify(unsigned_event).message()), HasSubstr("missing provenance tag"));
}

struct Tamper {
  std::string name;
  std::function<void(Entry*)> apply;
};
void PrintTo(const Tamper& t, std::ostream* os) { *os << t.name; }

class SignerTamperTest : public SignerTest, public ::testing::WithParamInterface<Tamper> {};

TEST_P(SignerTamperTest, ChangingASignedFieldFailsVerification) {
  Entry e = Signed();
  ASSERT_THAT(signer_.Verify(e), IsOk());
  GetParam().apply(&e);
  absl::Status status = signer_.Verify(e);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("does not match"));
}

INSTANTIATE_TEST_SUITE_P(
    Fields, SignerTamperTest,
    ::testing::Values(Tamper{"Namespace", [](Entry* e) { e->name_space = "other"; }},
                      Tamper{"Id", [](Entry* e) { e->id = "01J0000000000000000000000B"; }},
                      Tamper{"Text", [](Entry* e) { e->text = "hi!"; }},
                      Tamper{"TextTruncated", [](Entry* e) { e->text = "h"; }},
                      Tamper{"MetadataValue", [](Entry* e) { e->metadata["b"] = 2; }},
                      Tamper{"MetadataAddedKey", [](Entry* e) { e->metadata["c"] = nullptr; }},
                      Tamper{"MetadataIntToFloat", [](Entry* e) { e->metadata["b"] = 1.0; }},
                      Tamper{"Principal", [](Entry* e) { e->principal = "mallory"; }},
                      Tamper{"Source", [](Entry* e) { e->source = Source::kSystem; }},
                      Tamper{"Kind", [](Entry* e) { e->kind = Kind::kHoneypot; }},
                      Tamper{"State", [](Entry* e) { e->state = State::kQuarantined; }},
                      Tamper{"CreatedAt", [](Entry* e) { e->created_at_us += 1; }},
                      Tamper{"UpdatedAt", [](Entry* e) { e->updated_at_us -= 1; }},
                      Tamper{"EmbeddingOneUlp",
                             [](Entry* e) { e->embedding[1] = std::nextafter(e->embedding[1], 0.0f); }},
                      Tamper{"EmbeddingReplaced",
                             [](Entry* e) {
                               e->embedding = {0.0f, 1.0f};
                             }},
                      Tamper{"EmbeddingDropped", [](Entry* e) { e->embedding.pop_back(); }},
                      Tamper{"TagOneBitFlipped", [](Entry* e) { e->tag[31] ^= 0x01; }},
                      Tamper{"TagFirstByte", [](Entry* e) { e->tag[0] ^= 0x80; }}),
    [](const ::testing::TestParamInfo<Tamper>& info) { return info.param.name; });

TEST_F(SignerTest, EveryTagByteMatters) {
  const Entry e = Signed();
  for (size_t i = 0; i < kTagBytes; ++i) {
    Entry copy = e;
    copy.tag[i] ^= 0x40;
    EXPECT_EQ(signer_.Verify(copy).code(), absl::StatusCode::kDataLoss) << "byte " << i;
  }
}

TEST_F(SignerTest, NegativeZeroDiffersFromZero) {
  Entry a = SampleEntry(), b = SampleEntry();
  a.embedding = {0.0f};
  b.embedding = {-0.0f};
  signer_.Sign(&a);
  b.key_id = a.key_id;
  b.tag = a.tag;
  EXPECT_EQ(signer_.Verify(b).code(), absl::StatusCode::kDataLoss);
}

TEST_F(SignerTest, SwappingBytesBetweenTextAndPrincipalFailsVerification) {
  Entry a = SampleEntry();
  a.text = "ab";
  a.principal = "c";
  signer_.Sign(&a);
  Entry b = a;
  b.text = "a";
  b.principal = "bc";
  EXPECT_EQ(signer_.Verify(b).code(), absl::StatusCode::kDataLoss);
}

TEST_F(SignerTest, MissingOrShortTagIsDataLoss) {
  Entry e = Signed();
  e.tag.clear();
  absl::Status missing = signer_.Verify(e);
  EXPECT_EQ(missing.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("missing"));

  e = Signed();
  e.tag.pop_back();
  absl::Status short_tag = signer_.Verify(e);
  EXPECT_EQ(short_tag.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(short_tag.message()), HasSubstr("31 bytes"));

  e = Signed();
  e.tag.push_back('\0');
  EXPECT_EQ(signer_.Verify(e).code(), absl::StatusCode::kDataLoss);
}

TEST_F(SignerTest, UnknownKeyIdIsDataLoss) {
  for (uint32_t key_id : {0u, 2u, 99u, 0xffffffffu}) {
    Entry e = Signed();
    e.key_id = key_id;
    absl::Status status = signer_.Verify(e);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << key_id;
    EXPECT_THAT(std::string(status.message()), HasSubstr("unknown key id")) << key_id;
  }
}

TEST_F(SignerTest, FailureMessagesDoNotRevealTheExpectedTag) {
  Entry e = Signed();
  const std::string good_tag = e.tag;
  e.text = "tampered";
  absl::StatusOr<std::string> expected = HmacSha256(*keyring_.Find(1), CanonicalEncoding(e, 1));
  ASSERT_THAT(expected, IsOk());
  const std::string message(signer_.Verify(e).message());
  EXPECT_THAT(message, HasSubstr(e.id));
  EXPECT_THAT(message, Not(HasSubstr(HexEncode(*expected))));
  EXPECT_THAT(message, Not(HasSubstr(*expected)));
  EXPECT_THAT(message, Not(HasSubstr(HexEncode(good_tag))));
}

TEST_F(SignerTest, ReportIsNotSigned) {
  // The detector report is advisory and rewritten after signing (doc/entry_format.md).
  Entry e = Signed();
  e.report = {{"memsad", {{"flagged", true}}}};
  EXPECT_THAT(signer_.Verify(e), IsOk());
}

TEST_F(SignerTest, KeyIdIsBoundIntoTheTag) {
  // Relabelling a key-1 tag as key 2 fails even though key 2 exists.
  Entry e = Signed();
  ASSERT_THAT(keyring_.Rotate(&env_), IsOk());
  e.key_id = 2;
  absl::Status status = signer_.Verify(e);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("does not match"));
}

TEST_F(SignerTest, OldTagsVerifyAfterRotateAndNewOnesUseTheNewKey) {
  const Entry old_entry = Signed();
  ASSERT_EQ(old_entry.key_id, 1u);

  absl::StatusOr<uint32_t> id = keyring_.Rotate(&env_);
  ASSERT_TRUE(id.ok()) << id.status();
  ASSERT_EQ(*id, 2u);
  EXPECT_THAT(signer_.Verify(old_entry), IsOk());

  const Entry new_entry = Signed();
  EXPECT_EQ(new_entry.key_id, 2u);
  EXPECT_NE(new_entry.tag, old_entry.tag);
  EXPECT_THAT(signer_.Verify(new_entry), IsOk());

  // A signer over the keyring reloaded from disk accepts both.
  absl::StatusOr<Keyring> reloaded = Keyring::Load(keyring_.path());
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  Signer reloaded_signer(&*reloaded);
  EXPECT_THAT(reloaded_signer.Verify(old_entry), IsOk());
  EXPECT_THAT(reloaded_signer.Verify(new_entry), IsOk());
}

TEST_F(SignerTest, KeyringsWithDifferentKeysDisagree) {
  FakeEnv other_env(100);
  absl::StatusOr<Keyring> other = Keyring::Create(dir_ / "other.json", &other_env);
  ASSERT_THAT(other, IsOk());
  Signer other_signer(&*other);
  EXPECT_EQ(other_signer.Verify(Signed()).code(), absl::StatusCode::kDataLoss);
}

TEST_F(SignerTest, InvalidUtf8MetadataSignsAndVerifies) {
  Entry e = SampleEntry();
  e.metadata = {{"k", std::string("\xff\xfe")}};
  signer_.Sign(&e);
  ASSERT_EQ(e.tag.size(), kTagBytes);
  EXPECT_THAT(signer_.Verify(e), IsOk());
  e.metadata["k"] = std::string("\xff\xfd");
  EXPECT_EQ(signer_.Verify(e).code(), absl::StatusCode::kDataLoss);
}

TEST(SignerEmptyKeyringTest, SignLeavesNoTagAndVerifyFails) {
  Keyring empty;
  Signer signer(&empty);
  Entry e = SampleEntry();
  e.key_id = 5;
  e.tag = std::string(kTagBytes, 'x');
  signer.Sign(&e);
  EXPECT_EQ(e.key_id, 0u);
  EXPECT_TRUE(e.tag.empty());
  EXPECT_EQ(signer.Verify(e).code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace bulwark
