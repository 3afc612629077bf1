// The history head's JSON: the hand-built encoder writes exactly the bytes nlohmann::json's dump()
// of the same object wrote before (stores written by earlier builds, and a PostgreSQL store shared
// with them, hold those bytes), and what it writes decodes to the head it encoded.
#include "storage/signed_meta_json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "core/hex.h"

namespace bulwark {
namespace {

// The encoder every build before this one used.
std::string NlohmannHead(const HistoryHead& head) {
  return nlohmann::json{{"seq", head.seq},
                        {"link", HexEncode(head.link)},
                        {"key_id", head.key_id},
                        {"tag", HexEncode(head.tag)}}
      .dump();
}

std::string RandomBytes(std::mt19937_64& rng, size_t max_size) {
  std::string out(rng() % (max_size + 1), '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

TEST(SignedMetaJsonTest, HistoryHeadBytesEqualNlohmannsAndDecode) {
  std::mt19937_64 rng(20261124);
  std::vector<HistoryHead> heads = {
      {0, "", 0, ""},
      {1, std::string("\x00\xff", 2), 1, std::string(32, '\x7f')},
      {std::numeric_limits<int64_t>::max(), std::string(32, '\x01'), std::numeric_limits<uint32_t>::max(),
       "t"},
      {std::numeric_limits<int64_t>::min(), "l", 7, ""},
      {-5, "", 3, "x"},
  };
  for (int i = 0; i < 500; ++i) {
    heads.push_back({static_cast<int64_t>(rng()) >> (rng() % 64), RandomBytes(rng, 40),
                     static_cast<uint32_t>(rng() >> (rng() % 33 == 32 ? 0 : rng() % 33)),
                     RandomBytes(rng, 40)});
  }
  for (const HistoryHead& head : heads) {
    const std::string encoded = EncodeHistoryHead(head);
    ASSERT_EQ(encoded, NlohmannHead(head)) << head.seq << " " << head.key_id;
    absl::StatusOr<std::optional<HistoryHead>> decoded = DecodeHistoryHead(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    ASSERT_TRUE(decoded->has_value());
    EXPECT_EQ((*decoded)->seq, head.seq);
    EXPECT_EQ((*decoded)->link, head.link);
    EXPECT_EQ((*decoded)->key_id, head.key_id);
    EXPECT_EQ((*decoded)->tag, head.tag);
  }
}

}  // namespace
}  // namespace bulwark
