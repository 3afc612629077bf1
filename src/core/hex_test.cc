#include "core/hex.h"

#include <gtest/gtest.h>

namespace bulwark {
namespace {

TEST(HexTest, RoundTrip) {
  std::string bytes("\x00\x01\xfe\xff", 4);
  EXPECT_EQ(HexEncode(bytes), "0001feff");
  EXPECT_EQ(HexDecode("0001FEff"), bytes);
  EXPECT_FALSE(HexDecode("abc").has_value());
  EXPECT_FALSE(HexDecode("zz").has_value());
}

TEST(HexTest, Sha256KnownAnswer) {
  // FIPS 180-2 test vector for "abc".
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

}  // namespace
}  // namespace bulwark
