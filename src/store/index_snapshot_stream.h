// The index snapshot's byte streams (private to index_snapshot*.cc): a writer and a reader that
// pass every byte through one keyed MAC (GMAC, OpenSSL's EVP), and the BM25 section of a
// namespace's record (index_snapshot_lexical.cc).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <absl/strings/str_cat.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/status_macros.h"
#include "index/bm25_index.h"

namespace bulwark::snapshot_internal {

inline constexpr size_t kMacBytes = 16;
inline constexpr size_t kChunk = size_t{1} << 20;  // bytes per read or write call

inline std::string ErrnoText(int error) { return std::error_code(error, std::generic_category()).message(); }

// GMAC over a stream of bytes: AES-256-GCM with the bytes as additional data only (OpenSSL's EVP;
// GHASH with carry-less multiplication runs at several GB/s, 3-5x HMAC-SHA256 with the SHA
// extensions). Each (key, iv) pair MACs one stream only: the keys are per file (index_snapshot.cc).
class StreamMac {
 public:
  StreamMac() = default;
  StreamMac(const StreamMac&) = delete;
  StreamMac& operator=(const StreamMac&) = delete;
  ~StreamMac() { EVP_CIPHER_CTX_free(ctx_); }

  // `key`: 32 bytes; `iv`: the stream's number under that key.
  absl::Status Init(std::string_view key, uint32_t iv) {
    std::array<unsigned char, 12> nonce{};
    std::memcpy(nonce.data(), &iv, sizeof(iv));
    if (key.size() != 32 || (ctx_ = EVP_CIPHER_CTX_new()) == nullptr ||
        EVP_EncryptInit_ex(ctx_, EVP_aes_256_gcm(), nullptr,
                           reinterpret_cast<const unsigned char*>(key.data()), nonce.data()) != 1) {
      return absl::InternalError("GMAC init failed");
    }
    return absl::OkStatus();
  }
  // An uninitialized MAC (no Init) ignores what it is given (SnapshotWriter's unMACed streams).
  void Update(std::span<const std::byte> bytes) {
    if (ctx_ == nullptr) return;
    while (ok_ && !bytes.empty()) {
      const size_t n = std::min(bytes.size(), kChunk);
      int out = 0;
      ok_ = EVP_EncryptUpdate(ctx_, nullptr, &out, reinterpret_cast<const unsigned char*>(bytes.data()),
                              static_cast<int>(n)) == 1;
      bytes = bytes.subspan(n);
    }
  }
  absl::StatusOr<std::array<unsigned char, kMacBytes>> Final() {
    std::array<unsigned char, kMacBytes> out{};
    std::array<unsigned char, 16> none{};  // no ciphertext: nothing was encrypted
    int length = 0;
    if (ctx_ == nullptr || !ok_ || EVP_EncryptFinal_ex(ctx_, none.data(), &length) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, kMacBytes, out.data()) != 1) {
      return absl::InternalError("GMAC failed");
    }
    return out;
  }

 private:
  EVP_CIPHER_CTX* ctx_ = nullptr;
  bool ok_ = true;
};

template <typename T>
inline std::span<const std::byte> AsBytes(const T& value) {
  return std::as_bytes(std::span<const T>(&value, 1));
}

// Writes to `fd` (none if fd < 0: a writer that only computes the MAC of what it is given).
class SnapshotWriter {
 public:
  explicit SnapshotWriter(int fd) : fd_(fd) {}
  StreamMac& mac() { return mac_; }
  // MACs and writes `bytes` (small ones are buffered, and MACed when the buffer is written: one
  // MAC update per megabyte, not per field).
  void Append(std::span<const std::byte> bytes) {
    if (buffer_.size() + bytes.size() > kChunk) Flush();
    if (bytes.size() >= kChunk) {
      mac_.Update(bytes);
      WriteOut(bytes);
    } else {
      buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    }
  }
  template <typename T>
  void Put(const T& value) {
    Append(AsBytes(value));
  }
  // The MAC of everything appended so far.
  absl::StatusOr<std::array<unsigned char, kMacBytes>> FinalMac() {
    Flush();
    return mac_.Final();
  }
  void AppendRaw(std::span<const std::byte> bytes) {  // not MACed: the MAC itself
    Flush();
    WriteOut(bytes);
  }
  absl::Status Finish() {
    Flush();
    return error_;
  }

 private:
  void Flush() {
    mac_.Update(buffer_);
    WriteOut(buffer_);
    buffer_.clear();
  }
  void WriteOut(std::span<const std::byte> bytes) {
    while (fd_ >= 0 && error_.ok() && !bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), std::min(bytes.size(), kChunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = absl::InternalError(absl::StrCat("writing the index snapshot: ", ErrnoText(errno)));
        return;
      }
      bytes = bytes.subspan(static_cast<size_t>(n));
    }
  }
  const int fd_;
  StreamMac mac_;
  std::vector<std::byte> buffer_;
  absl::Status error_;
};

// A sequential reader of the bytes [begin, end) of a file that MACs every byte it hands out and
// never reads past `end`.
class SnapshotReader {
 public:
  SnapshotReader(int fd, uint64_t end) : SnapshotReader(fd, 0, end) {}
  SnapshotReader(int fd, uint64_t begin, uint64_t end) : fd_(fd), size_(end), offset_(begin) {}
  StreamMac& mac() { return mac_; }
  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return size_ - offset_; }

  absl::Status Read(std::span<std::byte> out) {
    if (out.size() > remaining()) return absl::DataLossError("the index snapshot is truncated");
    while (!out.empty()) {
      const ssize_t n = ::pread(fd_, out.data(), std::min(out.size(), kChunk), static_cast<off_t>(offset_));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return absl::DataLossError(absl::StrCat("reading the index snapshot: ", ErrnoText(errno)));
      mac_.Update(out.first(static_cast<size_t>(n)));
      offset_ += static_cast<uint64_t>(n);
      out = out.subspan(static_cast<size_t>(n));
    }
    return absl::OkStatus();
  }
  // Reads `count` values into `out` (resized); DataLoss, before allocating, if the file has fewer
  // bytes left.
  template <typename T>
  absl::Status ReadArray(uint64_t count, std::vector<T>* out) {
    if (count > remaining() / sizeof(T)) return absl::DataLossError("the index snapshot is truncated");
    out->resize(static_cast<size_t>(count));
    return Read(std::as_writable_bytes(std::span<T>(*out)));
  }
  template <typename T>
  absl::StatusOr<T> Get() {
    T value{};
    BULWARK_RETURN_IF_ERROR(Read(std::as_writable_bytes(std::span<T>(&value, 1))));
    return value;
  }
  absl::Status Skip(uint64_t bytes) {
    std::vector<std::byte> scratch(static_cast<size_t>(std::min<uint64_t>(bytes, kChunk)));
    while (bytes > 0) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(bytes, scratch.size()));
      BULWARK_RETURN_IF_ERROR(Read(std::span<std::byte>(scratch).first(n)));
      bytes -= n;
    }
    return absl::OkStatus();
  }

 private:
  const int fd_;
  const uint64_t size_;
  uint64_t offset_;
  StreamMac mac_;
};

// A BM25 section's body (index_snapshot.h, format): u64 slots, u64 terms, u64 name bytes, u64
// postings, then slots x i64 ids, terms x u32 name lengths, the names, terms x u32 posting counts,
// postings x (u32 slot, u32 tf). Bodies follow the row versions, outside the file's MAC; each is
// covered by its own keyed digest, which the namespace's record holds (under the file's MAC).
uint64_t LexicalBodyBytes(const Bm25Index& lexical);
void WriteLexicalBody(SnapshotWriter& out, const Bm25Index& lexical);
// A body's arrays as read, before Bm25Index::Restore (which runs only once the digest checked).
struct LexicalArrays {
  std::vector<int64_t> ids;
  std::vector<uint32_t> name_lengths, counts;
  std::string names;
  std::vector<Bm25Index::Posting> postings;
};
// Reads a body; DataLoss for counts beyond what `in` has left.
absl::StatusOr<LexicalArrays> ReadLexicalBody(SnapshotReader& in);

}  // namespace bulwark::snapshot_internal
