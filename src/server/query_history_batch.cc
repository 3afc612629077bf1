// The query batch's encoding, MAC and checks (see query_history_batch.h).
#include "server/query_history_batch.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <openssl/crypto.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/signer.h"

namespace bulwark::server {
namespace {

constexpr char kFormat[] = "bulwark.query-batch";
constexpr char kMacDomain[] = "bulwark.query-batch.v1\n";
constexpr size_t kNonceHexChars = 32;

absl::StatusOr<std::string> MacOf(std::string_view body, const HmacKey& key) {
  return HmacSha256(key, absl::StrCat(kMacDomain, ToAbsl(body)));
}

std::string EncodeFloats(std::span<const float> values) {
  std::string raw(values.size() * sizeof(float), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    for (int b = 0; b < 4; ++b) raw[i * 4 + b] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
  return std::string(absl::Base64Escape(raw));
}

// The embedding of query `index`: exactly `dimension` finite floats.
absl::StatusOr<std::vector<float>> DecodeFloats(std::string_view base64, size_t dimension, size_t index) {
  // The base64 text of dimension floats, checked before decoding anything larger.
  if (base64.size() != (dimension * sizeof(float) + 2) / 3 * 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("query ", index, ": the embedding does not have the store's dimension ", dimension));
  }
  std::string raw;
  if (!absl::Base64Unescape(ToAbsl(base64), &raw) || raw.size() != dimension * sizeof(float)) {
    return absl::InvalidArgumentError(
        absl::StrCat("query ", index, ": the embedding is not base64 of ", dimension, " floats"));
  }
  std::vector<float> values(dimension);
  for (size_t i = 0; i < dimension; ++i) {
    uint32_t bits = 0;
    for (int b = 0; b < 4; ++b)
      bits |= static_cast<uint32_t>(static_cast<uint8_t>(raw[i * 4 + b])) << (8 * b);
    std::memcpy(&values[i], &bits, sizeof bits);
    if (!std::isfinite(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("query ", index, ": the embedding has a non-finite value"));
    }
  }
  return values;
}

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("malformed query batch: ", ToAbsl(why)));
}

// The queries of a parsed batch, each checked.
absl::StatusOr<std::vector<ForwardedQuery>> ParseQueries(const nlohmann::json& queries, size_t dimension) {
  if (!queries.is_array()) return Malformed("queries must be an array");
  if (queries.size() > kMaxQueriesPerBatch) {
    return absl::InvalidArgumentError(absl::StrCat("a query batch carries at most ", kMaxQueriesPerBatch,
                                                   " queries, not ", queries.size()));
  }
  std::vector<ForwardedQuery> out;
  out.reserve(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    const nlohmann::json& q = queries[i];
    if (!q.is_object() || q.size() != 2 || !q.contains("namespace") || !q["namespace"].is_string() ||
        !q.contains("embedding") || !q["embedding"].is_string()) {
      return Malformed(absl::StrCat("query ", i, " must be {\"namespace\", \"embedding\"} strings"));
    }
    ForwardedQuery parsed;
    parsed.name_space = q["namespace"].get<std::string>();
    if (absl::Status valid = ValidateNamespace(parsed.name_space); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("query ", i, ": ", valid.message()));
    }
    BULWARK_ASSIGN_OR_RETURN(parsed.embedding,
                             DecodeFloats(q["embedding"].get_ref<const std::string&>(), dimension, i));
    out.push_back(std::move(parsed));
  }
  return out;
}

}  // namespace

absl::StatusOr<HmacKey> QueryBatchKey(const Keyring& keyring) {
  const std::shared_ptr<const HmacKey> first = keyring.Find(1);
  if (first == nullptr) return absl::FailedPreconditionError("the keyring has no key 1");
  BULWARK_ASSIGN_OR_RETURN(const std::string derived, HmacSha256(*first, "bulwark.replica.query-history.v1"));
  HmacKey key;
  std::memcpy(key.data(), derived.data(), key.size());
  return key;
}

absl::StatusOr<SealedBatch> SealQueryBatch(const QueryBatch& batch, const HmacKey& key) {
  nlohmann::json queries = nlohmann::json::array();
  for (const ForwardedQuery& q : batch.queries) {
    queries.push_back({{"namespace", q.name_space}, {"embedding", EncodeFloats(q.embedding)}});
  }
  SealedBatch sealed;
  sealed.body =
      nlohmann::json{{"format", kFormat},        {"version", 1},         {"from", batch.from},
                     {"sent_us", batch.sent_us}, {"nonce", batch.nonce}, {"queries", std::move(queries)}}
          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  BULWARK_ASSIGN_OR_RETURN(const std::string mac, MacOf(sealed.body, key));
  sealed.mac = HexEncode(mac);
  return sealed;
}

absl::StatusOr<QueryBatch> OpenQueryBatch(std::string_view body, std::string_view mac, const HmacKey& key,
                                          int64_t now_us, size_t dimension) {
  const std::optional<std::string> presented = HexDecode(mac);
  if (!presented || presented->size() != kTagBytes) {
    return absl::UnauthenticatedError("a query batch needs its replica MAC");
  }
  BULWARK_ASSIGN_OR_RETURN(const std::string expected, MacOf(body, key));
  if (CRYPTO_memcmp(expected.data(), presented->data(), kTagBytes) != 0) {
    return absl::UnauthenticatedError("the query batch's replica MAC does not match");
  }
  const nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object() || parsed.value("format", "") != kFormat || !parsed.contains("version") ||
      parsed["version"] != 1) {
    return Malformed("not a bulwark.query-batch version 1");
  }
  QueryBatch batch;
  if (!parsed.contains("from") || !parsed["from"].is_string() || !parsed.contains("sent_us") ||
      !parsed["sent_us"].is_number_integer() || !parsed.contains("nonce") || !parsed["nonce"].is_string()) {
    return Malformed("from, sent_us and nonce are required");
  }
  batch.from = parsed["from"].get<std::string>();
  batch.sent_us = parsed["sent_us"].get<int64_t>();
  batch.nonce = parsed["nonce"].get<std::string>();
  if (batch.nonce.size() != kNonceHexChars || !HexDecode(batch.nonce))
    return Malformed("nonce must be 32 hex");
  if (batch.sent_us < now_us - kMaxBatchSkewUs || batch.sent_us > now_us + kMaxBatchSkewUs) {
    return absl::UnauthenticatedError("the query batch is too old or from the future (clock skew > 30 s)");
  }
  BULWARK_ASSIGN_OR_RETURN(
      batch.queries,
      ParseQueries(parsed.contains("queries") ? parsed["queries"] : nlohmann::json(), dimension));
  return batch;
}

}  // namespace bulwark::server
