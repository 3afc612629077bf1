// Parsing and checking of safetensors buffers, and the F16/BF16 -> F32 conversion. See
// safetensors.h for the format and the list of checks.
#include "embed/bert/safetensors.h"

#include <absl/strings/str_cat.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "core/status_macros.h"

namespace bulwark::bert {
namespace {

constexpr size_t kLengthBytes = 8;

struct DtypeInfo {
  SafetensorsDtype dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DtypeInfo, 15> kDtypes = {{
    {SafetensorsDtype::kBool, "BOOL", 1},
    {SafetensorsDtype::kU8, "U8", 1},
    {SafetensorsDtype::kI8, "I8", 1},
    {SafetensorsDtype::kF8E5M2, "F8_E5M2", 1},
    {SafetensorsDtype::kF8E4M3, "F8_E4M3", 1},
    {SafetensorsDtype::kI16, "I16", 2},
    {SafetensorsDtype::kU16, "U16", 2},
    {SafetensorsDtype::kF16, "F16", 2},
    {SafetensorsDtype::kBF16, "BF16", 2},
    {SafetensorsDtype::kI32, "I32", 4},
    {SafetensorsDtype::kU32, "U32", 4},
    {SafetensorsDtype::kF32, "F32", 4},
    {SafetensorsDtype::kF64, "F64", 8},
    {SafetensorsDtype::kI64, "I64", 8},
    {SafetensorsDtype::kU64, "U64", 8},
}};

absl::Status Corrupt(absl::string_view what) {
  return absl::DataLossError(absl::StrCat("safetensors: ", what));
}

absl::Status CorruptTensor(absl::string_view name, absl::string_view what) {
  return Corrupt(absl::StrCat("tensor \"", name, "\": ", what));
}

// A non-negative JSON integer, or -1.
int64_t NonNegative(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? -1 : static_cast<int64_t>(v);
  }
  if (value.is_number_integer()) return std::max<int64_t>(-1, value.get<int64_t>());
  return -1;
}

struct Placed {
  std::string name;
  SafetensorsTensor tensor;
  uint64_t begin = 0, end = 0;
};

// Checks one header entry against a data region of `data_size` bytes and fills `out`.
absl::Status ParseEntry(const std::string& name, const nlohmann::json& entry, uint64_t data_size,
                        Placed* out) {
  if (!entry.is_object()) return CorruptTensor(name, "entry is not an object");
  if (entry.size() != 3 || !entry.contains("dtype") || !entry.contains("shape") ||
      !entry.contains("data_offsets")) {
    return CorruptTensor(name, "entry needs exactly dtype, shape and data_offsets");
  }
  const nlohmann::json& dtype = entry["dtype"];
  if (!dtype.is_string()) return CorruptTensor(name, "dtype is not a string");
  const auto* info = std::find_if(kDtypes.begin(), kDtypes.end(), [&](const DtypeInfo& d) {
    return d.name == dtype.get_ref<const std::string&>();
  });
  if (info == kDtypes.end()) return CorruptTensor(name, "unknown dtype");
  const nlohmann::json& shape = entry["shape"];
  if (!shape.is_array() || shape.size() > SafetensorsFile::kMaxRank) {
    return CorruptTensor(
        name, absl::StrCat("shape is not an array of at most ", SafetensorsFile::kMaxRank, " dimensions"));
  }
  uint64_t elements = 1;
  bool overflow = false;
  out->tensor.shape.clear();
  for (const nlohmann::json& dim : shape) {
    const int64_t d = NonNegative(dim);
    if (d < 0) return CorruptTensor(name, "shape has a negative or non-integer dimension");
    out->tensor.shape.push_back(d);
    overflow |= __builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements);
  }
  if (overflow || elements > data_size / info->size)
    return CorruptTensor(name, "shape is larger than the file");
  const nlohmann::json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    return CorruptTensor(name, "data_offsets is not [begin, end]");
  const int64_t begin = NonNegative(offsets[0]), end = NonNegative(offsets[1]);
  if (begin < 0 || end < begin || static_cast<uint64_t>(end) > data_size) {
    return CorruptTensor(name, "data_offsets out of the data region");
  }
  if (static_cast<uint64_t>(end - begin) != elements * info->size) {
    return CorruptTensor(name, absl::StrCat("data_offsets span ", end - begin,
                                            " bytes, shape and dtype need ", elements * info->size));
  }
  out->name = name;
  out->tensor.dtype = info->dtype;
  out->begin = static_cast<uint64_t>(begin);
  out->end = static_cast<uint64_t>(end);
  return absl::OkStatus();
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;  // +-0
  } else {
    // Subnormal half: normalise the mantissa into a normal float.
    exponent = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

template <typename T>
T LoadLittleEndian(const char* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  static_assert(std::endian::native == std::endian::little, "big-endian hosts are not supported");
  return value;
}

}  // namespace

size_t DtypeSize(SafetensorsDtype dtype) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.dtype == dtype) return d.size;
  }
  return 0;
}

std::string_view DtypeName(SafetensorsDtype dtype) {
  for (const DtypeInfo& d : kDtypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

int64_t SafetensorsTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

absl::StatusOr<SafetensorsFile> SafetensorsFile::Parse(std::string_view buffer,
                                                       const SafetensorsLimits& limits) {
  if (buffer.size() < kLengthBytes) return Corrupt("shorter than the 8-byte header length");
  const uint64_t header_bytes = LoadLittleEndian<uint64_t>(buffer.data());
  if (header_bytes > limits.max_header_bytes) {
    return Corrupt(
        absl::StrCat("header of ", header_bytes, " bytes exceeds the limit of ", limits.max_header_bytes));
  }
  if (header_bytes > buffer.size() - kLengthBytes)
    return Corrupt("header length runs past the end of the file");
  const std::string_view header = buffer.substr(kLengthBytes, header_bytes);
  const std::string_view data = buffer.substr(kLengthBytes + header_bytes);
  const nlohmann::json json = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Corrupt("header is not a JSON object");
  if (json.size() > limits.max_tensors + 1) return Corrupt("too many tensors");

  std::vector<Placed> placed;
  placed.reserve(json.size());
  for (const auto& [name, entry] : json.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object()) return Corrupt("__metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) return Corrupt("__metadata__ values must be strings");
      }
      continue;
    }
    Placed p;
    BULWARK_RETURN_IF_ERROR(ParseEntry(name, entry, data.size(), &p));
    placed.push_back(std::move(p));
  }
  if (placed.size() > limits.max_tensors) return Corrupt("too many tensors");
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t expected = 0;
  for (const Placed& p : placed) {
    if (p.begin != expected) {
      return CorruptTensor(p.name,
                           p.begin < expected ? "overlaps the previous tensor" : "leaves a gap before it");
    }
    expected = p.end;
  }
  if (expected != data.size()) return Corrupt("data region has bytes that belong to no tensor");

  SafetensorsFile file;
  file.tensors_.reserve(placed.size());
  for (Placed& p : placed) {
    p.tensor.bytes = data.substr(p.begin, p.end - p.begin);
    file.tensors_.emplace(std::move(p.name), std::move(p.tensor));
  }
  return file;
}

const SafetensorsTensor* SafetensorsFile::Find(std::string_view name) const {
  auto it = tensors_.find(absl::string_view(name.data(), name.size()));
  return it == tensors_.end() ? nullptr : &it->second;
}

std::vector<std::string> SafetensorsFile::Names() const {
  std::vector<std::pair<const char*, std::string>> by_offset;
  for (const auto& [name, tensor] : tensors_) by_offset.emplace_back(tensor.bytes.data(), name);
  std::sort(by_offset.begin(), by_offset.end());
  std::vector<std::string> names;
  for (auto& [offset, name] : by_offset) names.push_back(std::move(name));
  return names;
}

absl::Status TensorToFloat(const SafetensorsTensor& tensor, std::span<float> out) {
  if (out.size() != static_cast<size_t>(tensor.elements())) {
    return absl::InvalidArgumentError(
        absl::StrCat("safetensors: output holds ", out.size(), " floats, tensor has ", tensor.elements()));
  }
  const char* p = tensor.bytes.data();
  switch (tensor.dtype) {
    case SafetensorsDtype::kF32:
      if (!out.empty()) std::memcpy(out.data(), p, out.size() * sizeof(float));  // data() may be null
      return absl::OkStatus();
    case SafetensorsDtype::kF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = HalfToFloat(LoadLittleEndian<uint16_t>(p + 2 * i));
      return absl::OkStatus();
    case SafetensorsDtype::kBF16:
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = std::bit_cast<float>(static_cast<uint32_t>(LoadLittleEndian<uint16_t>(p + 2 * i)) << 16);
      }
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "safetensors: dtype ", std::string(DtypeName(tensor.dtype)), " is not F32, F16 or BF16"));
  }
}

}  // namespace bulwark::bert
