// JsonWriter against nlohmann's dump: random trees of every value type (strings with quotes,
// backslashes, control characters, multi-byte and invalid UTF-8; integers at their limits; doubles
// integral, tiny, huge and not finite) must come out byte for byte as nlohmann writes them.
#include "core/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace bulwark {
namespace {

std::string Dump(const nlohmann::json& v) {
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Writes `v` through the writer, member by member (objects iterate in nlohmann's sorted key order).
void Write(JsonWriter& w, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      w.BeginObject();
      for (auto it = v.begin(); it != v.end(); ++it) {
        w.Key(it.key());
        Write(w, it.value());
      }
      w.EndObject();
      break;
    case nlohmann::json::value_t::array:
      w.BeginArray();
      for (const auto& item : v) Write(w, item);
      w.EndArray();
      break;
    case nlohmann::json::value_t::string:
      w.String(v.get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::number_integer:
      w.Int(v.get<int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned:
      w.Uint(v.get<uint64_t>());
      break;
    case nlohmann::json::value_t::number_float:
      w.Double(v.get<double>());
      break;
    case nlohmann::json::value_t::boolean:
      w.Bool(v.get<bool>());
      break;
    default:
      w.Json(v);
  }
}

std::string RandomString(std::mt19937& rng) {
  static const std::vector<std::string> kPieces = {"a",          "Z",
                                                   " ",          "\"",
                                                   "\\",         "/",
                                                   "\n",         "\r",
                                                   "\t",         "\b",
                                                   "\f",         std::string(1, '\0'),
                                                   "\x01",       "\x1f",
                                                   "\x7f",       "é",
                                                   "€",          "😀",
                                                   "\xff",       "\xc3",
                                                   "\xe2\x82",   "\xed\xa0\x80",
                                                   "plain text "};
  std::uniform_int_distribution<size_t> length(0, 12), pick(0, kPieces.size() - 1);
  std::string s;
  for (size_t n = length(rng); n > 0; --n) s += kPieces[pick(rng)];
  return s;
}

nlohmann::json RandomValue(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 2 ? 6 : 8);
  switch (kind(rng)) {
    case 0:
      return RandomString(rng);
    case 1: {
      static const int64_t kInts[] = {
          0, -1, 1, 42, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
      return kInts[std::uniform_int_distribution<size_t>(0, std::size(kInts) - 1)(rng)];
    }
    case 2:
      return std::numeric_limits<uint64_t>::max() - std::uniform_int_distribution<uint64_t>(0, 9)(rng);
    case 3: {
      static const double kDoubles[] = {0.0,
                                        -0.0,
                                        1.0,
                                        0.25,
                                        1e-5,
                                        1e300,
                                        -3.5e-300,
                                        0.1 + 0.2,
                                        static_cast<double>(0.7f),
                                        std::nan(""),
                                        std::numeric_limits<double>::infinity()};
      return kDoubles[std::uniform_int_distribution<size_t>(0, std::size(kDoubles) - 1)(rng)];
    }
    case 4:
      return std::bernoulli_distribution(0.5)(rng);
    case 5:
      return nullptr;
    case 6:
      return std::uniform_real_distribution<double>(-1, 1)(rng);
    case 7: {
      nlohmann::json a = nlohmann::json::array();
      for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n)
        a.push_back(RandomValue(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int n = std::uniform_int_distribution<int>(0, 4)(rng); n > 0; --n)
        o[RandomString(rng)] = RandomValue(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonWriterTest, WritesWhatNlohmannDumps) {
  std::mt19937 rng(20261122);
  for (int trial = 0; trial < 3000; ++trial) {
    const nlohmann::json value = RandomValue(rng, 0);
    std::string out;
    JsonWriter w(&out);
    Write(w, value);
    ASSERT_EQ(out, Dump(value)) << "trial " << trial;
  }
}

TEST(JsonWriterTest, DoublesOfEveryMagnitudeAsNlohmannWritesThem) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double value;
    std::memcpy(&value, &bits, sizeof(value));  // any pattern: subnormal, huge, NaN, infinite
    if (i % 2)
      value =
          static_cast<double>(static_cast<float>(std::ldexp(static_cast<double>(bits % 1000003), -(i % 40))));
    std::string out;
    JsonWriter w(&out);
    w.Double(value);
    ASSERT_EQ(out, Dump(nlohmann::json(value))) << "bits " << bits;
  }
}

TEST(JsonWriterTest, EscapesEachSpecialCharacter) {
  std::string out;
  JsonWriter w(&out);
  w.BeginArray();
  w.String(std::string("q\"b\\n\nt\tc\x01\x1f\x7f", 12));
  w.String("\xff");
  w.EndArray();
  EXPECT_EQ(out, "[\"q\\\"b\\\\n\\nt\\tc\\u0001\\u001f\x7f\",\"\xef\xbf\xbd\"]");
}

TEST(JsonWriterTest, AppendsToWhatIsThere) {
  std::string out = "prefix:";
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("a");
  w.Json(nlohmann::json{{"x", 1}});
  w.Key("b");
  w.BeginArray();
  w.EndArray();
  w.EndObject();
  EXPECT_EQ(out, "prefix:{\"a\":{\"x\":1},\"b\":[]}");
}

}  // namespace
}  // namespace bulwark
