// The query batch's encoding, MAC and checks (see query_history_batch.h).
#include "server/query_history_batch.h"

#include <absl/strings/str_cat.h>
#include <openssl/crypto.h>

#include <cmath>
#include <cstring>

#include "core/hex.h"
#include "core/status_macros.h"
#include "core/strings.h"
#include "core/text_validation.h"
#include "provenance/signer.h"

namespace bulwark::server {
namespace {

constexpr char kMagic[] = "BWQB";
constexpr uint8_t kVersion = 1;
constexpr char kMacDomain[] = "bulwark.query-batch.v1\n";
constexpr size_t kNonceBytes = 16;

absl::StatusOr<std::string> MacOf(std::string_view body, const HmacKey& key) {
  return HmacSha256(key, absl::StrCat(kMacDomain, ToAbsl(body)));
}

void PutUint(std::string* out, uint64_t value, int bytes) {
  for (int b = 0; b < bytes; ++b) out->push_back(static_cast<char>((value >> (8 * b)) & 0xff));
}

void PutString(std::string* out, std::string_view s) {
  PutUint(out, s.size(), 2);
  out->append(s);
}

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("malformed query batch: ", ToAbsl(why)));
}

// Reads the body front to back; every read checks what is left first.
class Reader {
 public:
  explicit Reader(std::string_view body) : rest_(body) {}
  bool Uint(int bytes, uint64_t* value) {
    if (rest_.size() < static_cast<size_t>(bytes)) return false;
    *value = 0;
    for (int b = 0; b < bytes; ++b)
      *value |= static_cast<uint64_t>(static_cast<uint8_t>(rest_[b])) << (8 * b);
    rest_.remove_prefix(bytes);
    return true;
  }
  bool Bytes(size_t n, std::string_view* out) {
    if (rest_.size() < n) return false;
    *out = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return true;
  }
  bool String(std::string* out) {
    uint64_t n = 0;
    std::string_view bytes;
    if (!Uint(2, &n) || !Bytes(n, &bytes)) return false;
    out->assign(bytes);
    return true;
  }
  bool done() const { return rest_.empty(); }

 private:
  std::string_view rest_;
};

// Query `index`: a valid namespace name and exactly `dimension` finite floats.
absl::StatusOr<ForwardedQuery> ReadQuery(Reader& reader, size_t dimension, size_t index) {
  ForwardedQuery q;
  std::string_view raw;
  if (!reader.String(&q.name_space) || !reader.Bytes(dimension * sizeof(float), &raw)) {
    return Malformed(absl::StrCat("query ", index, " is cut short"));
  }
  if (absl::Status valid = ValidateNamespace(q.name_space); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("query ", index, ": ", valid.message()));
  }
  q.embedding.resize(dimension);
  for (size_t i = 0; i < dimension; ++i) {
    uint32_t bits = 0;
    for (int b = 0; b < 4; ++b)
      bits |= static_cast<uint32_t>(static_cast<uint8_t>(raw[i * 4 + b])) << (8 * b);
    std::memcpy(&q.embedding[i], &bits, sizeof bits);
    if (!std::isfinite(q.embedding[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("query ", index, ": the embedding has a non-finite value"));
    }
  }
  return q;
}

// The header fields after the magic and version; the queries are left in `reader`.
absl::Status ReadHeader(Reader& reader, QueryBatch* batch, uint64_t* dimension, uint64_t* count) {
  uint64_t sent_us = 0;
  std::string_view nonce;
  if (!reader.String(&batch->from) || !reader.Uint(8, &sent_us) || !reader.Bytes(kNonceBytes, &nonce) ||
      !reader.Uint(4, dimension) || !reader.Uint(4, count)) {
    return Malformed("the header is cut short");
  }
  batch->sent_us = static_cast<int64_t>(sent_us);
  batch->nonce = HexEncode(nonce);
  return absl::OkStatus();
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
  const std::optional<std::string> nonce = HexDecode(batch.nonce);
  if (!nonce || nonce->size() != kNonceBytes) return absl::InvalidArgumentError("the nonce must be 32 hex");
  const size_t dimension = batch.queries.empty() ? 0 : batch.queries.front().embedding.size();
  SealedBatch sealed;
  std::string& out = sealed.body;
  out.reserve(64 + batch.queries.size() * (dimension * sizeof(float) + 64));
  out.append(kMagic, 4);
  PutUint(&out, kVersion, 1);
  PutString(&out, batch.from);
  PutUint(&out, static_cast<uint64_t>(batch.sent_us), 8);
  out.append(*nonce);
  PutUint(&out, dimension, 4);
  PutUint(&out, batch.queries.size(), 4);
  for (const ForwardedQuery& q : batch.queries) {
    PutString(&out, q.name_space);
    for (float f : q.embedding) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      PutUint(&out, bits, 4);
    }
  }
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
  Reader reader(body);
  std::string_view magic;
  uint64_t version = 0;
  if (!reader.Bytes(4, &magic) || magic != std::string_view(kMagic, 4) || !reader.Uint(1, &version) ||
      version != kVersion) {
    return Malformed("not a query batch of version 1");
  }
  QueryBatch batch;
  uint64_t batch_dimension = 0;
  uint64_t count = 0;
  BULWARK_RETURN_IF_ERROR(ReadHeader(reader, &batch, &batch_dimension, &count));
  if (batch.sent_us < now_us - kMaxBatchSkewUs || batch.sent_us > now_us + kMaxBatchSkewUs) {
    return absl::UnauthenticatedError("the query batch is too old or from the future (clock skew > 30 s)");
  }
  if (count > kMaxQueriesPerBatch) {
    return absl::InvalidArgumentError(
        absl::StrCat("a query batch carries at most ", kMaxQueriesPerBatch, " queries, not ", count));
  }
  if (count > 0 && batch_dimension != dimension) {
    return absl::InvalidArgumentError(absl::StrCat("the batch's embeddings have dimension ", batch_dimension,
                                                   ", not the store's ", dimension));
  }
  batch.queries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    BULWARK_ASSIGN_OR_RETURN(ForwardedQuery q, ReadQuery(reader, dimension, i));
    batch.queries.push_back(std::move(q));
  }
  if (!reader.done()) return Malformed("bytes after the last query");
  return batch;
}

}  // namespace bulwark::server
