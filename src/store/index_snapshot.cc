// IndexSnapshot (see index_snapshot.h): the streaming writer and reader. Both pass every byte but
// the BM25 bodies through one GMAC context as it is written or read (AES-256-GCM over additional
// data, index_snapshot_stream.h; HMAC-SHA256 at about 2 GB/s was a fifth of a 100k open), so the
// check costs one fast pass over data that is in the cache anyway. The reader reads the arrays straight into
// the FlatIndex's own storage, and leaves the BM25 bodies where they are (ReadSnapshotLexical, on first use).
#include "store/index_snapshot.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

#include "core/status_macros.h"
#include "core/strings.h"
#include "provenance/signer.h"
#include "store/index_snapshot_stream.h"

namespace bulwark {
namespace {

using snapshot_internal::AsBytes;
using snapshot_internal::ErrnoText;
using snapshot_internal::kMacBytes;
using snapshot_internal::LexicalArrays;
using snapshot_internal::LexicalBodyBytes;
using snapshot_internal::ReadLexicalBody;
using snapshot_internal::SnapshotReader;
using snapshot_internal::SnapshotWriter;
using snapshot_internal::WriteLexicalBody;

constexpr char kMagic[8] = {'B', 'W', 'I', 'X', 'S', 'N', 'A', 'P'};
constexpr uint32_t kByteOrderMark = 0x01020304;
constexpr size_t kLinkBytes = 32;
constexpr size_t kNonceBytes = 16;
// Magic, version, mark, dimension, stride, block rows, key id, nonce, seq, link length and bytes,
// three u64 (the lexical terms' length and text follow).
constexpr uint64_t kHeaderBytes = 8 + 6 * 4 + kNonceBytes + 8 + 4 + kLinkBytes + 3 * 8;
// The smallest namespace record: name length, store rows, indexed rows, has-int8, has-BM25.
constexpr uint64_t kMinNamespaceBytes = 4 + 8 + 8 + 1 + 1;
// A BM25 body's place in a namespace record: offset, bytes, digest.
constexpr uint64_t kBodyRefBytes = 8 + 8 + kMacBytes;

// The MAC key of one snapshot file: HMAC(HMAC(keyring key `key_id`, "bulwark.index.snapshot.v1"),
// the file's random nonce), used for nothing else (each GMAC stream of the file has its own iv).
absl::StatusOr<std::string> SnapshotKey(const Keyring& keyring, uint32_t key_id, std::string_view nonce) {
  const std::shared_ptr<const HmacKey> key = keyring.Find(key_id);
  if (key == nullptr)
    return absl::DataLossError(absl::StrCat("signed with key ", key_id, ", not in the keyring"));
  BULWARK_ASSIGN_OR_RETURN(const std::string snapshot_key, HmacSha256(*key, "bulwark.index.snapshot.v1"));
  return HmacSha256(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(snapshot_key.data()), snapshot_key.size()),
      nonce);
}

// Bytes of a namespace's int8 arrays for `rows` rows (Int8Rows::Arrays).
uint64_t Int8Bytes(uint64_t rows, uint64_t dimension) {
  const uint64_t blocks = (rows + Int8Rows::kBlockRows - 1) / Int8Rows::kBlockRows;
  return blocks * dimension * Int8Rows::kBlockRows + 3 * blocks * Int8Rows::kBlockRows * sizeof(float);
}

// The BM25 index written for `ns` (none without lexical terms to name how it was tokenized).
const Bm25Index* LexicalOf(const IndexSnapshotSource& source, const IndexSnapshotSource::Namespace& ns) {
  return source.lexical_terms.empty() ? nullptr : ns.lexical;
}

uint64_t SnapshotSize(int dimension, size_t stride, const IndexSnapshotSource& source) {
  uint64_t size = kHeaderBytes + 4 + source.lexical_terms.size();
  for (const IndexSnapshotSource::Namespace& ns : source.namespaces) {
    const uint64_t n = ns.vectors->size();
    size += kMinNamespaceBytes + ns.name.size() + n * (8 + 1 + 1) + n * stride * sizeof(float);
    if (ns.vectors->Parts().int8 != nullptr) size += Int8Bytes(n, static_cast<uint64_t>(dimension));
    if (const Bm25Index* lexical = LexicalOf(source, ns)) size += kBodyRefBytes + LexicalBodyBytes(*lexical);
  }
  return size + source.row_versions->size() * 16 + kMacBytes;
}

// The GMAC iv of namespace i's BM25 body (the file's MAC uses 0).
uint32_t BodyIv(size_t i) { return static_cast<uint32_t>(i + 1); }

// Where each namespace's BM25 body goes (after the row versions, back to back) and its digest.
struct BodyRef {
  uint64_t offset = 0;
  uint64_t bytes = 0;
  std::array<unsigned char, kMacBytes> digest{};
};

absl::StatusOr<std::vector<std::optional<BodyRef>>> PlanBodies(const IndexSnapshotSource& source,
                                                               std::string_view key, uint64_t file_size) {
  uint64_t total = 0;
  for (const IndexSnapshotSource::Namespace& ns : source.namespaces) {
    if (const Bm25Index* lexical = LexicalOf(source, ns)) total += LexicalBodyBytes(*lexical);
  }
  uint64_t offset = file_size - kMacBytes - total;
  std::vector<std::optional<BodyRef>> refs;
  for (size_t i = 0; i < source.namespaces.size(); ++i) {
    const Bm25Index* lexical = LexicalOf(source, source.namespaces[i]);
    if (lexical == nullptr) {
      refs.emplace_back();
      continue;
    }
    SnapshotWriter digest(-1);  // MACs only
    BULWARK_RETURN_IF_ERROR(digest.mac().Init(key, BodyIv(i)));
    WriteLexicalBody(digest, *lexical);
    BodyRef ref{.offset = offset, .bytes = LexicalBodyBytes(*lexical)};
    BULWARK_ASSIGN_OR_RETURN(ref.digest, digest.FinalMac());
    offset += ref.bytes;
    refs.push_back(ref);
  }
  return refs;
}

absl::Status WriteContents(int fd, SnapshotWriter& out, int dimension, size_t stride, uint32_t key_id,
                           std::string_view nonce, std::string_view key, const IndexSnapshotSource& source,
                           uint64_t file_size) {
  BULWARK_ASSIGN_OR_RETURN(const std::vector<std::optional<BodyRef>> bodies,
                           PlanBodies(source, key, file_size));
  out.Append(std::as_bytes(std::span<const char>(kMagic)));
  for (uint32_t v : {kIndexSnapshotVersion, kByteOrderMark, static_cast<uint32_t>(dimension),
                     static_cast<uint32_t>(stride), static_cast<uint32_t>(Int8Rows::kBlockRows), key_id}) {
    out.Put(v);
  }
  out.Append(std::as_bytes(std::span<const char>(nonce)));
  out.Put(source.seq);
  std::array<char, kLinkBytes> link{};
  const size_t link_size = std::min(source.link.size(), kLinkBytes);
  std::copy_n(source.link.data(), link_size, link.data());
  out.Put(static_cast<uint32_t>(link_size));
  out.Put(link);
  out.Put(static_cast<uint64_t>(source.namespaces.size()));
  out.Put(static_cast<uint64_t>(source.row_versions->size()));
  out.Put(file_size);
  out.Put(static_cast<uint32_t>(source.lexical_terms.size()));
  out.Append(std::as_bytes(std::span<const char>(source.lexical_terms)));
  for (size_t i = 0; i < source.namespaces.size(); ++i) {
    const IndexSnapshotSource::Namespace& ns = source.namespaces[i];
    const FlatIndex::ConstParts parts = ns.vectors->Parts();
    out.Put(static_cast<uint32_t>(ns.name.size()));
    out.Append(std::as_bytes(std::span<const char>(ns.name)));
    out.Put(ns.store_rows);
    out.Put(static_cast<uint64_t>(parts.row_ids.size()));
    out.Put(static_cast<uint8_t>(parts.int8 != nullptr));
    out.Append(std::as_bytes(parts.row_ids));
    out.Append(std::as_bytes(parts.states));
    out.Append(std::as_bytes(parts.kinds));
    out.Append(std::as_bytes(parts.rows));
    if (parts.int8 != nullptr) {
      const Int8Rows::ConstArrays arrays = parts.int8->Arrays();
      for (std::span<const std::byte> a : {arrays.lines, arrays.scales, arrays.row_norms, arrays.err_norms}) {
        out.Append(a);
      }
    }
    out.Put(static_cast<uint8_t>(bodies[i].has_value()));
    if (bodies[i].has_value()) {
      out.Put(bodies[i]->offset);
      out.Put(bodies[i]->bytes);
      out.Put(bodies[i]->digest);
    }
  }
  source.row_versions->ForEach([&](int64_t row_id, int64_t version) {
    out.Put(row_id);
    out.Put(version);
  });
  BULWARK_ASSIGN_OR_RETURN(const auto mac, out.FinalMac());
  SnapshotWriter unmaced(fd);  // the BM25 bodies: each under its digest, not the file's MAC
  for (const IndexSnapshotSource::Namespace& ns : source.namespaces) {
    if (const Bm25Index* lexical = LexicalOf(source, ns)) WriteLexicalBody(unmaced, *lexical);
  }
  BULWARK_RETURN_IF_ERROR(unmaced.Finish());
  out.AppendRaw(std::as_bytes(std::span<const unsigned char>(mac)));
  return out.Finish();
}

struct Header {
  uint32_t key_id = 0;
  std::string nonce;
  int64_t seq = 0;
  std::string link;
  uint64_t namespaces = 0;
  uint64_t row_versions = 0;
  std::string lexical_terms;
};

// The key id and nonce, read before the MAC can start (they are MACed with the rest afterwards).
absl::StatusOr<std::pair<uint32_t, std::string>> PeekKey(int fd) {
  // Magic (2 words), version, mark, dimension, stride, rows, key id, nonce.
  std::array<uint32_t, 8 + kNonceBytes / 4> prefix{};
  if (::pread(fd, prefix.data(), sizeof(prefix), 0) != static_cast<ssize_t>(sizeof(prefix))) {
    return absl::DataLossError("the index snapshot is truncated");
  }
  return std::pair{prefix[7], std::string(reinterpret_cast<const char*>(&prefix[8]), kNonceBytes)};
}

// Reads and checks the header (everything before the first namespace).
absl::StatusOr<Header> ReadHeader(SnapshotReader& in, uint64_t file_size, int dimension, size_t stride) {
  std::array<char, 8> magic{};
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span<char>(magic))));
  if (std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("not an index snapshot (bad magic)");
  }
  std::array<uint32_t, 6> words{};
  for (uint32_t& w : words) {
    BULWARK_ASSIGN_OR_RETURN(w, in.Get<uint32_t>());
  }
  const auto [version, mark, dim, row_stride, block_rows, key_id] = words;
  if (version != kIndexSnapshotVersion || mark != kByteOrderMark) {
    return absl::FailedPreconditionError(absl::StrCat("index snapshot version ", version, " (byte order ",
                                                      mark, "); this build reads version ",
                                                      kIndexSnapshotVersion));
  }
  if (dim != static_cast<uint32_t>(dimension) || row_stride != stride || block_rows != Int8Rows::kBlockRows) {
    return absl::FailedPreconditionError(absl::StrCat("index snapshot of dimension ", dim, " stride ",
                                                      row_stride, "; the store's is ", dimension));
  }
  Header header;
  header.key_id = key_id;
  header.nonce.resize(kNonceBytes);
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span<char>(header.nonce))));
  BULWARK_ASSIGN_OR_RETURN(header.seq, in.Get<int64_t>());
  BULWARK_ASSIGN_OR_RETURN(const uint32_t link_size, in.Get<uint32_t>());
  BULWARK_ASSIGN_OR_RETURN(const auto link, (in.Get<std::array<char, kLinkBytes>>()));
  if (link_size > kLinkBytes || header.seq < 0) return absl::DataLossError("malformed index snapshot header");
  header.link.assign(link.data(), link_size);
  BULWARK_ASSIGN_OR_RETURN(header.namespaces, in.Get<uint64_t>());
  BULWARK_ASSIGN_OR_RETURN(header.row_versions, in.Get<uint64_t>());
  BULWARK_ASSIGN_OR_RETURN(const uint64_t recorded_size, in.Get<uint64_t>());
  if (recorded_size != file_size) {
    return absl::DataLossError(
        absl::StrCat("the index snapshot has ", file_size, " bytes, its header says ", recorded_size));
  }
  BULWARK_ASSIGN_OR_RETURN(const uint32_t terms_size, in.Get<uint32_t>());
  if (terms_size > kMaxSnapshotLexicalTermsBytes || terms_size > in.remaining())
    return absl::DataLossError("malformed lexical terms in the index snapshot header");
  header.lexical_terms.resize(terms_size);
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span<char>(header.lexical_terms))));
  if (in.remaining() < kMacBytes) return absl::DataLossError("the index snapshot is truncated");
  const uint64_t body = in.remaining() - kMacBytes;
  if (header.namespaces > body / kMinNamespaceBytes || header.row_versions > body / 16) {
    return absl::DataLossError("index snapshot counts exceed its size");
  }
  return header;
}

// Reads one namespace's record into a new FlatIndex (and where its BM25 body is, if it has one).
absl::StatusOr<SnapshotNamespace> ReadNamespace(
    SnapshotReader& in, int dimension, absl::FunctionRef<size_t(std::string_view, size_t)> capacity) {
  SnapshotNamespace ns;
  BULWARK_ASSIGN_OR_RETURN(const uint32_t name_size, in.Get<uint32_t>());
  if (name_size == 0 || name_size > kMaxSnapshotNamespaceBytes || name_size > in.remaining()) {
    return absl::DataLossError("malformed namespace name in the index snapshot");
  }
  ns.name.resize(name_size);
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span<char>(ns.name))));
  BULWARK_ASSIGN_OR_RETURN(ns.store_rows, in.Get<int64_t>());
  BULWARK_ASSIGN_OR_RETURN(const uint64_t rows, in.Get<uint64_t>());
  BULWARK_ASSIGN_OR_RETURN(const uint8_t has_int8, in.Get<uint8_t>());
  BULWARK_ASSIGN_OR_RETURN(ns.vectors, FlatIndex::Create(dimension));
  const uint64_t per_row = 8 + 1 + 1 + ns.vectors->stride() * sizeof(float);
  if (ns.store_rows < 0 || has_int8 > 1 || rows > in.remaining() / per_row ||
      (has_int8 == 1 &&
       Int8Bytes(rows, static_cast<uint64_t>(dimension)) > in.remaining() - rows * per_row)) {
    return absl::DataLossError(absl::StrCat("namespace ", ns.name, ": row count exceeds the index snapshot"));
  }
  const size_t n = static_cast<size_t>(rows);
  BULWARK_ASSIGN_OR_RETURN(FlatIndex::MutableParts parts, ns.vectors->StartRestore(n, capacity(ns.name, n)));
  for (std::span<std::byte> array :
       {std::as_writable_bytes(parts.row_ids), std::as_writable_bytes(parts.states),
        std::as_writable_bytes(parts.kinds), std::as_writable_bytes(parts.rows)}) {
    BULWARK_RETURN_IF_ERROR(in.Read(array));
  }
  bool int8_filled = false;
  if (has_int8 == 1) {
    const Int8Rows::MutableArrays& a = parts.int8;
    const uint64_t bytes = Int8Bytes(rows, static_cast<uint64_t>(dimension));
    if (a.lines.size() + a.scales.size() + a.row_norms.size() + a.err_norms.size() == bytes) {
      for (std::span<std::byte> array : {a.lines, a.scales, a.row_norms, a.err_norms}) {
        BULWARK_RETURN_IF_ERROR(in.Read(array));
      }
      int8_filled = true;
    } else {
      BULWARK_RETURN_IF_ERROR(in.Skip(bytes));  // this CPU keeps no int8 copy: the MAC covers it still
    }
  }
  if (absl::Status restored = ns.vectors->FinishRestore(int8_filled); !restored.ok()) {
    return absl::DataLossError(
        absl::StrCat("namespace ", ns.name, " in the index snapshot: ", restored.message()));
  }
  BULWARK_ASSIGN_OR_RETURN(const uint8_t has_lexical, in.Get<uint8_t>());
  if (has_lexical > 1) return absl::DataLossError("malformed BM25 section in the index snapshot");
  if (has_lexical == 1) {
    SnapshotLexicalSection& section = ns.lexical.emplace();
    BULWARK_ASSIGN_OR_RETURN(section.offset, in.Get<uint64_t>());
    BULWARK_ASSIGN_OR_RETURN(section.bytes, in.Get<uint64_t>());
    BULWARK_ASSIGN_OR_RETURN(section.digest, (in.Get<std::array<unsigned char, kMacBytes>>()));
  }
  return ns;
}

struct FileCloser {
  int fd;
  ~FileCloser() { ::close(fd); }
};

// OK if the namespaces' BM25 bodies lie back to back from `begin` (the end of the row versions)
// to the MAC, each inside the file.
absl::Status CheckBodies(const IndexSnapshot& snapshot, uint64_t begin, uint64_t file_size) {
  const uint64_t end = file_size - kMacBytes;
  if (begin > end) return absl::DataLossError("the index snapshot is truncated");  // into the MAC
  uint64_t next = begin;
  for (const SnapshotNamespace& ns : snapshot.namespaces) {
    if (!ns.lexical.has_value()) continue;
    if (ns.lexical->offset != next || ns.lexical->bytes > end - next) {
      return absl::DataLossError("malformed BM25 body places in the index snapshot");
    }
    next += ns.lexical->bytes;
  }
  if (next != end) return absl::DataLossError("the index snapshot has trailing bytes");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> WriteIndexSnapshot(const std::filesystem::path& path, int dimension,
                                            const IndexSnapshotSource& source, const Keyring& keyring) {
  const uint32_t key_id = keyring.newest_key_id();
  if (key_id == 0) return absl::FailedPreconditionError("the keyring has no key");
  std::string nonce(kNonceBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1)
    return absl::InternalError("no random nonce");
  BULWARK_ASSIGN_OR_RETURN(const std::string key, SnapshotKey(keyring, key_id, nonce));
  BULWARK_ASSIGN_OR_RETURN(auto probe, FlatIndex::Create(dimension));
  const size_t stride = probe->stride();
  for (const IndexSnapshotSource::Namespace& ns : source.namespaces) {
    if (ns.vectors->dimension() != dimension || ns.name.empty() ||
        ns.name.size() > kMaxSnapshotNamespaceBytes) {
      return absl::FailedPreconditionError(
          absl::StrCat("namespace ", ToAbsl(ns.name), " cannot be snapshotted"));
    }
  }
  const std::filesystem::path temp = path.string() + absl::StrCat(".tmp-", ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("creating ", temp.string(), ": ", ErrnoText(errno)));
  absl::Status status;
  {
    FileCloser closer{fd};
    SnapshotWriter out(fd);
    status = out.mac().Init(key, 0);
    const uint64_t size = SnapshotSize(dimension, stride, source);
    if (status.ok()) status = WriteContents(fd, out, dimension, stride, key_id, nonce, key, source, size);
    if (status.ok() && ::fsync(fd) != 0)
      status = absl::InternalError(absl::StrCat("fsync: ", ErrnoText(errno)));
  }
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = absl::InternalError(absl::StrCat("renaming the index snapshot: ", ErrnoText(errno)));
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  if (const int dir =
          ::open(path.parent_path().empty() ? "." : path.parent_path().c_str(), O_RDONLY | O_CLOEXEC);
      dir >= 0) {
    ::fsync(dir);  // the rename itself; best effort (a lost rename leaves the old snapshot)
    ::close(dir);
  }
  return SnapshotSize(dimension, stride, source);
}

absl::StatusOr<IndexSnapshot> ReadIndexSnapshot(const std::filesystem::path& path, int dimension,
                                                const Keyring& keyring,
                                                absl::FunctionRef<size_t(std::string_view, size_t)> capacity,
                                                const SnapshotLexicalOptions& lexical) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError("no index snapshot");
    return absl::DataLossError(absl::StrCat("opening the index snapshot: ", ErrnoText(errno)));
  }
  // Kept open by the BM25 sections returned (their bytes are read on first use).
  const std::shared_ptr<const int> file(new int(fd), [](const int* f) {
    ::close(*f);
    delete f;
  });
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < static_cast<off_t>(kHeaderBytes + 4 + kMacBytes))
    return absl::DataLossError("the index snapshot is truncated");
  const uint64_t file_size = static_cast<uint64_t>(end);
  BULWARK_ASSIGN_OR_RETURN(auto probe, FlatIndex::Create(dimension));
  BULWARK_ASSIGN_OR_RETURN(const auto key_id_and_nonce, PeekKey(fd));
  BULWARK_ASSIGN_OR_RETURN(const std::string key,
                           SnapshotKey(keyring, key_id_and_nonce.first, key_id_and_nonce.second));
  SnapshotReader in(fd, file_size);
  BULWARK_RETURN_IF_ERROR(in.mac().Init(key, 0));
  BULWARK_ASSIGN_OR_RETURN(const Header header, ReadHeader(in, file_size, dimension, probe->stride()));
  IndexSnapshot snapshot;
  snapshot.seq = header.seq;
  snapshot.link = header.link;
  for (uint64_t i = 0; i < header.namespaces; ++i) {
    BULWARK_ASSIGN_OR_RETURN(SnapshotNamespace ns, ReadNamespace(in, dimension, capacity));
    snapshot.namespaces.push_back(std::move(ns));
  }
  if (header.row_versions * 16 > in.remaining())
    return absl::DataLossError("the index snapshot is truncated");
  snapshot.row_versions.resize(static_cast<size_t>(header.row_versions));
  BULWARK_RETURN_IF_ERROR(in.Read(std::as_writable_bytes(std::span(snapshot.row_versions))));
  BULWARK_RETURN_IF_ERROR(CheckBodies(snapshot, in.offset(), file_size));
  BULWARK_ASSIGN_OR_RETURN(const auto expected, in.mac().Final());
  std::array<unsigned char, kMacBytes> stored{};
  if (::pread(fd, stored.data(), stored.size(), static_cast<off_t>(file_size - kMacBytes)) !=
      static_cast<ssize_t>(kMacBytes)) {
    return absl::DataLossError("the index snapshot's MAC cannot be read");
  }
  if (CRYPTO_memcmp(stored.data(), expected.data(), kMacBytes) != 0) {
    return absl::DataLossError(
        "the index snapshot's MAC does not match (changed, or not made with this keyring)");
  }
  // BM25 sections are returned only if they were tokenized as this store tokenizes.
  snapshot.lexical_terms_match = !lexical.terms.empty() && header.lexical_terms == lexical.terms;
  for (size_t i = 0; i < snapshot.namespaces.size(); ++i) {
    std::optional<SnapshotLexicalSection>& lexical = snapshot.namespaces[i].lexical;
    if (!snapshot.lexical_terms_match) {
      lexical.reset();
    } else if (lexical.has_value()) {
      lexical->fd = file;
      lexical->key_id = header.key_id;
      lexical->nonce = header.nonce;
      lexical->iv = BodyIv(i);
    }
  }
  return snapshot;
}

absl::StatusOr<Bm25Index> ReadSnapshotLexical(const SnapshotLexicalSection& section, const Keyring& keyring,
                                              const Bm25Options& options) {
  if (section.fd == nullptr) return absl::DataLossError("no BM25 section to read");
  BULWARK_ASSIGN_OR_RETURN(const std::string key, SnapshotKey(keyring, section.key_id, section.nonce));
  SnapshotReader in(*section.fd, section.offset, section.offset + section.bytes);
  BULWARK_RETURN_IF_ERROR(in.mac().Init(key, section.iv));
  absl::StatusOr<LexicalArrays> arrays = ReadLexicalBody(in);
  if (arrays.ok() && in.remaining() != 0) arrays = absl::DataLossError("trailing bytes");
  BULWARK_ASSIGN_OR_RETURN(const auto digest, in.mac().Final());
  if (!arrays.ok() || CRYPTO_memcmp(digest.data(), section.digest.data(), kMacBytes) != 0) {
    return absl::DataLossError("the BM25 section of the index snapshot does not match its digest");
  }
  absl::StatusOr<Bm25Index> restored = Bm25Index::Restore(options, arrays->ids, arrays->name_lengths,
                                                          arrays->names, arrays->counts, arrays->postings);
  if (!restored.ok()) {
    return absl::DataLossError(
        absl::StrCat("BM25 section of the index snapshot: ", restored.status().message()));
  }
  return restored;
}

}  // namespace bulwark
