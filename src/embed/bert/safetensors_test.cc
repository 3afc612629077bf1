// Tests of SafetensorsFile: well-formed files parse and convert exactly; each malformed header or
// tensor table is refused with DataLoss; no byte flip or truncation of a real file crashes.
#include "embed/bert/safetensors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/status_matchers.h"

namespace bulwark::bert {
namespace {

using ::bulwark::testing::IsOk;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

std::string LittleEndian64(uint64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);
  return out;
}

// A file with the given header (dumped as is) and data region.
std::string FileOf(const json& header, const std::string& data) {
  const std::string text = header.dump();
  return LittleEndian64(text.size()) + text + data;
}

std::string Floats(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

std::string Halves(std::vector<uint16_t> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * 2);
}

json Entry(const char* dtype, std::vector<int64_t> shape, int64_t begin, int64_t end) {
  return {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
}

// Two F32 tensors, a [2, 3] matrix and a [2] vector, plus metadata.
std::string ValidFile() {
  const json header = {{"__metadata__", {{"format", "pt"}}},
                       {"m", Entry("F32", {2, 3}, 0, 24)},
                       {"v", Entry("F32", {2}, 24, 32)}};
  return FileOf(header, Floats({1, 2, 3, 4, 5, 6, -1.5f, 0.25f}));
}

absl::Status ParseStatus(const std::string& buffer) { return SafetensorsFile::Parse(buffer).status(); }

TEST(SafetensorsTest, ParsesAValidFile) {
  const std::string buffer = ValidFile();
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(buffer);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->size(), 2u);
  EXPECT_THAT(file->Names(), ElementsAre("m", "v"));
  const SafetensorsTensor* m = file->Find("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dtype, SafetensorsDtype::kF32);
  EXPECT_THAT(m->shape, ElementsAre(2, 3));
  EXPECT_EQ(m->elements(), 6);
  std::vector<float> values(6);
  ASSERT_THAT(TensorToFloat(*m, values), IsOk());
  EXPECT_THAT(values, ElementsAre(1, 2, 3, 4, 5, 6));
  std::vector<float> v(2);
  ASSERT_THAT(TensorToFloat(*file->Find("v"), v), IsOk());
  EXPECT_THAT(v, ElementsAre(-1.5f, 0.25f));
  EXPECT_EQ(file->Find("missing"), nullptr);
  EXPECT_EQ(file->Find("__metadata__"), nullptr);
}

TEST(SafetensorsTest, ConvertsHalfAndBfloat16Exactly) {
  // F16: 1, -2, 65504 (largest), 2^-24 (smallest subnormal), 2^-14 (smallest normal), +inf, -0.
  // BF16: 1, -2, 3.140625.
  const json header = {{"h", Entry("F16", {7}, 0, 14)}, {"b", Entry("BF16", {3}, 14, 20)}};
  const std::string buffer = FileOf(header, Halves({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x0400, 0x7C00, 0x8000}) +
                                                Halves({0x3F80, 0xC000, 0x4049}));
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(buffer);
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<float> h(7), b(3);
  ASSERT_THAT(TensorToFloat(*file->Find("h"), h), IsOk());
  ASSERT_THAT(TensorToFloat(*file->Find("b"), b), IsOk());
  EXPECT_THAT(h, ElementsAre(1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -14),
                             std::numeric_limits<float>::infinity(), -0.0f));
  EXPECT_TRUE(std::signbit(h[6]));
  EXPECT_THAT(b, ElementsAre(1.0f, -2.0f, 3.140625f));
}

TEST(SafetensorsTest, TensorToFloatRefusesOtherDtypesAndWrongSizes) {
  const std::string buffer = FileOf({{"i", Entry("I64", {2}, 0, 16)}}, std::string(16, '\0'));
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(buffer);
  ASSERT_TRUE(file.ok()) << file.status();
  std::vector<float> out(2);
  EXPECT_EQ(TensorToFloat(*file->Find("i"), out).code(), absl::StatusCode::kInvalidArgument);
  const std::string valid = ValidFile();
  absl::StatusOr<SafetensorsFile> f32 = SafetensorsFile::Parse(valid);
  ASSERT_TRUE(f32.ok()) << f32.status();
  std::vector<float> wrong(5);
  EXPECT_EQ(TensorToFloat(*f32->Find("m"), wrong).code(), absl::StatusCode::kInvalidArgument);
}

TEST(SafetensorsTest, AcceptsZeroSizedTensorsAndAnEmptyTable) {
  EXPECT_THAT(ParseStatus(FileOf(json::object(), "")), IsOk());
  const json header = {{"empty", Entry("F32", {0, 4}, 0, 0)}, {"v", Entry("F32", {1}, 0, 4)}};
  const std::string buffer = FileOf(header, Floats({7}));
  absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(buffer);
  ASSERT_TRUE(file.ok()) << file.status();
  // Regression (found by safetensors_fuzz): converting a zero-element tensor into an empty span,
  // whose data() is null, must not pass null to memcpy.
  std::vector<float> none;
  EXPECT_THAT(TensorToFloat(*file->Find("empty"), none), IsOk());
}

TEST(SafetensorsTest, RefusesBadLengths) {
  EXPECT_EQ(ParseStatus("").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseStatus("1234567").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseStatus(LittleEndian64(10) + "{}").code(), absl::StatusCode::kDataLoss);  // runs past the end
  EXPECT_EQ(ParseStatus(LittleEndian64(~uint64_t{0}) + "{}").code(), absl::StatusCode::kDataLoss);
  // Over the header limit, even though the file is long enough.
  const std::string big = LittleEndian64(100) + "{}" + std::string(98, ' ');
  EXPECT_TRUE(ParseStatus(big).ok()) << ParseStatus(big);
  const absl::Status limited = SafetensorsFile::Parse(big, {.max_header_bytes = 99}).status();
  EXPECT_EQ(limited.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(limited.message(), HasSubstr("limit"));
}

TEST(SafetensorsTest, RefusesBadHeaders) {
  const std::string data = Floats({1, 2});
  const auto status_of = [&](const json& header) { return ParseStatus(FileOf(header, data)); };
  const std::vector<std::pair<std::string, json>> cases = {
      {"array header", json::array()},
      {"entry not an object", {{"t", 3}}},
      {"missing dtype", {{"t", {{"shape", {2}}, {"data_offsets", {0, 8}}}}}},
      {"extra field", {{"t", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0, 8}}, {"x", 1}}}}},
      {"unknown dtype", {{"t", Entry("F17", {2}, 0, 8)}}},
      {"dtype not a string", {{"t", {{"dtype", 4}, {"shape", {2}}, {"data_offsets", {0, 8}}}}}},
      {"negative dimension", {{"t", Entry("F32", {-2}, 0, 8)}}},
      {"float dimension", {{"t", {{"dtype", "F32"}, {"shape", {2.0}}, {"data_offsets", {0, 8}}}}}},
      {"rank over 8", {{"t", Entry("F32", {1, 1, 1, 1, 1, 1, 1, 1, 2}, 0, 8)}}},
      {"span too short for the shape", {{"t", Entry("F32", {3}, 0, 8)}}},
      {"shape overflows", {{"t", Entry("F32", {1LL << 40, 1LL << 40, 1LL << 40}, 0, 8)}}},
      {"end before begin", {{"t", Entry("F32", {0}, 8, 0)}}},
      {"offsets past the data", {{"t", Entry("F32", {2}, 4, 12)}}},
      {"one offset", {{"t", {{"dtype", "F32"}, {"shape", {2}}, {"data_offsets", {0}}}}}},
      {"gap at the start", {{"t", Entry("F32", {1}, 4, 8)}}},
      {"trailing bytes", {{"t", Entry("F32", {1}, 0, 4)}}},
      {"overlap", {{"a", Entry("F32", {2}, 0, 8)}, {"b", Entry("F32", {1}, 4, 8)}}},
      {"metadata not strings", {{"__metadata__", {{"k", 1}}}, {"t", Entry("F32", {2}, 0, 8)}}},
      {"metadata not an object", {{"__metadata__", "x"}, {"t", Entry("F32", {2}, 0, 8)}}},
  };
  for (const auto& [what, header] : cases) {
    const absl::Status status = status_of(header);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << what << ": " << status;
  }
  EXPECT_EQ(ParseStatus(LittleEndian64(5) + "{\"t\":" + data).code(), absl::StatusCode::kDataLoss);
  // A gap between two tensors.
  EXPECT_EQ(ParseStatus(
                FileOf({{"a", Entry("F32", {1}, 0, 4)}, {"b", Entry("F32", {1}, 8, 12)}}, Floats({1, 2, 3})))
                .code(),
            absl::StatusCode::kDataLoss);
}

TEST(SafetensorsTest, RefusesTooManyTensors) {
  json header = json::object();
  for (int i = 0; i < 3; ++i) header["t" + std::to_string(i)] = Entry("F32", {0}, 0, 0);
  EXPECT_THAT(SafetensorsFile::Parse(FileOf(header, ""), {.max_tensors = 3}), IsOk());
  EXPECT_EQ(SafetensorsFile::Parse(FileOf(header, ""), {.max_tensors = 2}).status().code(),
            absl::StatusCode::kDataLoss);
}

// LevelDB-style corruption test: every single-byte change and every truncation of a valid file
// either still parses into tensors that lie inside the buffer, or is DataLoss; nothing crashes.
TEST(SafetensorsTest, EveryByteFlipAndTruncationIsSafe) {
  const std::string valid = ValidFile();
  int refused = 0;
  auto check = [&](const std::string& buffer) {
    absl::StatusOr<SafetensorsFile> file = SafetensorsFile::Parse(buffer);
    if (!file.ok()) {
      ASSERT_EQ(file.status().code(), absl::StatusCode::kDataLoss) << file.status();
      ++refused;
      return;
    }
    for (const std::string& name : file->Names()) {
      const SafetensorsTensor* t = file->Find(name);
      ASSERT_GE(t->bytes.data(), buffer.data());
      ASSERT_LE(t->bytes.data() + t->bytes.size(), buffer.data() + buffer.size());
      ASSERT_EQ(t->bytes.size(), static_cast<size_t>(t->elements()) * DtypeSize(t->dtype));
    }
  };
  for (size_t i = 0; i < valid.size(); ++i) {
    for (uint8_t flip : {0x01, 0x20, 0x80, 0xFF}) {
      std::string corrupt = valid;
      corrupt[i] = static_cast<char>(corrupt[i] ^ flip);
      check(corrupt);
    }
  }
  for (size_t length = 0; length < valid.size(); ++length) check(valid.substr(0, length));
  EXPECT_GT(refused, static_cast<int>(valid.size()));  // every truncation at least
}

}  // namespace
}  // namespace bulwark::bert
