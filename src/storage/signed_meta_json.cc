// The signed meta rows' JSON (see signed_meta_json.h).
#include "storage/signed_meta_json.h"

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "core/hex.h"

namespace bulwark {

std::string EncodeHistoryHead(const HistoryHead& head) {
  // Written on every add, so built directly rather than through nlohmann::json. The bytes are
  // those of nlohmann's dump() of the same object (keys in sorted order, no spaces; hex strings
  // need no escaping), which earlier builds wrote: signed_meta_json_test compares the two.
  return absl::StrCat(R"({"key_id":)", head.key_id, R"(,"link":")", HexEncode(head.link), R"(","seq":)",
                      head.seq, R"(,"tag":")", HexEncode(head.tag), R"("})");
}

absl::StatusOr<std::optional<HistoryHead>> DecodeHistoryHead(std::string_view value) {
  const nlohmann::json json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  auto bad = [] { return absl::DataLossError("the history head does not decode"); };
  if (!json.is_object()) return bad();
  auto seq = json.find("seq");
  auto link = json.find("link");
  auto key_id = json.find("key_id");
  auto tag = json.find("tag");
  if (seq == json.end() || !seq->is_number_integer() || link == json.end() || !link->is_string() ||
      key_id == json.end() || !key_id->is_number_unsigned() || tag == json.end() || !tag->is_string()) {
    return bad();
  }
  std::optional<std::string> link_bytes = HexDecode(link->get<std::string>());
  std::optional<std::string> tag_bytes = HexDecode(tag->get<std::string>());
  const uint64_t key = key_id->get<uint64_t>();
  if (!link_bytes || !tag_bytes || key > UINT32_MAX) return bad();
  return std::optional<HistoryHead>(HistoryHead{seq->get<int64_t>(), *std::move(link_bytes),
                                                static_cast<uint32_t>(key), *std::move(tag_bytes)});
}

std::string EncodeGateManifest(const GateManifest& manifest) {
  return nlohmann::json{
      {"namespaces", manifest.namespaces}, {"key_id", manifest.sign_key_id}, {"tag", HexEncode(manifest.tag)}}
      .dump();
}

absl::StatusOr<std::optional<GateManifest>> DecodeGateManifest(std::string_view value) {
  const nlohmann::json json = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  auto bad = [] { return absl::DataLossError("the query gate manifest does not decode"); };
  if (!json.is_object()) return bad();
  auto names = json.find("namespaces");
  auto key_id = json.find("key_id");
  auto tag = json.find("tag");
  if (names == json.end() || !names->is_array() || key_id == json.end() || !key_id->is_number_unsigned() ||
      key_id->get<uint64_t>() > UINT32_MAX || tag == json.end() || !tag->is_string()) {
    return bad();
  }
  GateManifest manifest;
  for (const nlohmann::json& name : *names) {
    if (!name.is_string()) return bad();
    manifest.namespaces.push_back(name.get<std::string>());
  }
  manifest.sign_key_id = static_cast<uint32_t>(key_id->get<uint64_t>());
  std::optional<std::string> tag_bytes = HexDecode(tag->get<std::string>());
  if (!tag_bytes) return bad();
  manifest.tag = *std::move(tag_bytes);
  return std::optional<GateManifest>(std::move(manifest));
}

}  // namespace bulwark
