// The keyring file: creating it with mode 0600, loading it as untrusted bytes (size bounded before
// reading, every field validated), and rotating it by atomic replacement. The byte format is
// described in doc/keyring_format.md.
#include "provenance/keyring.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "core/hex.h"
#include "core/status_macros.h"

namespace bulwark {
namespace {

constexpr char kFormat[] = "bulwark.keyring";
constexpr uint64_t kVersion = 1;
constexpr mode_t kFileMode = 0600;

// Overwrites the whole buffer of `s`, including spare capacity, then empties it.
void WipeString(std::string& s) {
  s.resize(s.capacity());
  OPENSSL_cleanse(s.data(), s.size());
  s.clear();
}

std::string Describe(const std::filesystem::path& path) { return absl::StrCat("keyring ", path.string()); }

absl::Status ErrnoStatus(int error_number, absl::string_view what, const std::filesystem::path& path) {
  return absl::ErrnoToStatus(error_number, absl::StrCat(what, " ", path.string()));
}

// Closes a file descriptor when it goes out of scope.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now and reports the result (close can report a deferred write error).
  int Close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

absl::Status WriteAll(int fd, std::string_view data, const std::filesystem::path& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot write", path);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// Sets mode 0600 (whatever the umask did), writes `data`, fsyncs and closes `fd`.
absl::Status FillAndClose(FdCloser& fd, std::string_view data, const std::filesystem::path& path) {
  if (::fchmod(fd.get(), kFileMode) != 0) return ErrnoStatus(errno, "cannot chmod", path);
  BULWARK_RETURN_IF_ERROR(WriteAll(fd.get(), data, path));
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, "cannot fsync", path);
  if (fd.Close() != 0) return ErrnoStatus(errno, "cannot close", path);
  return absl::OkStatus();
}

std::filesystem::path DirectoryOf(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

// Makes a create, rename or unlink in the directory of `path` durable.
absl::Status SyncDirectoryOf(const std::filesystem::path& path) {
  std::filesystem::path dir = DirectoryOf(path);
  int raw = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) return ErrnoStatus(errno, "cannot open directory", dir);
  FdCloser fd(raw);
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, "cannot fsync directory", dir);
  return absl::OkStatus();
}

// A key as Serialize sees it (Keyring::StoredKey is private to the class).
struct KeyView {
  KeyInfo info;
  const HmacKey* key;
};

// The JSON text of a keyring file holding `keys`, members in the order of doc/keyring_format.md.
// The caller wipes the returned string.
std::string Serialize(const std::vector<KeyView>& keys) {
  nlohmann::ordered_json doc;
  doc["format"] = kFormat;
  doc["version"] = kVersion;
  doc["keys"] = nlohmann::ordered_json::array();
  for (const KeyView& k : keys) {
    doc["keys"].push_back({{"id", k.info.id},
                           {"created_at_us", k.info.created_at_us},
                           {"key", HexEncode(std::span<const uint8_t>(*k.key))}});
  }
  std::string text = doc.dump(2) + "\n";
  for (auto& k : doc["keys"]) WipeString(k["key"].get_ref<std::string&>());
  return text;
}

// The keyring document's top level: a JSON object with exactly "format" (kFormat), "version"
// (kVersion) and "keys" (an array of 1 to kMaxKeyringKeys items). DataLoss saying what is wrong.
absl::Status CheckKeyringHeader(const nlohmann::json& doc, const std::filesystem::path& path) {
  auto malformed = [&path](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(Describe(path), " is malformed: ", why));
  };
  if (doc.is_discarded()) return malformed("not valid JSON");
  if (!doc.is_object()) return malformed("the top level is not a JSON object");
  for (const auto& [name, value] : doc.items()) {
    if (name != "format" && name != "version" && name != "keys") {
      return malformed(absl::StrCat("unknown member \"", name, "\""));
    }
  }
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || format->get_ref<const std::string&>() != kFormat) {
    return malformed(absl::StrCat("\"format\" must be \"", kFormat, "\""));
  }
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_unsigned() || version->get<uint64_t>() != kVersion) {
    return malformed(absl::StrCat("\"version\" must be ", kVersion));
  }
  const auto keys = doc.find("keys");
  if (keys == doc.end() || !keys->is_array()) return malformed("\"keys\" must be an array");
  if (keys->empty()) return malformed("\"keys\" is empty");
  if (keys->size() > kMaxKeyringKeys) {
    return malformed(absl::StrCat("more than ", kMaxKeyringKeys, " keys"));
  }
  return absl::OkStatus();
}

}  // namespace

Keyring::StoredKey::~StoredKey() { OPENSSL_cleanse(key.data(), key.size()); }

Keyring::Keyring(Keyring&& other) {
  absl::MutexLock other_lock(&other.mu_);
  absl::MutexLock lock(&mu_);  // uncontended: nobody else sees this object yet
  path_ = std::move(other.path_);
  keys_ = std::move(other.keys_);
  other.keys_.clear();
}

Keyring& Keyring::operator=(Keyring&& other) {
  if (this == &other) return *this;
  std::filesystem::path path;
  KeyList keys;
  {
    absl::MutexLock other_lock(&other.mu_);
    path = std::move(other.path_);
    keys = std::move(other.keys_);
    other.keys_.clear();
  }
  absl::MutexLock rotate_lock(&rotate_mu_);
  absl::MutexLock lock(&mu_);
  path_ = std::move(path);
  keys_.swap(keys);  // the old list is released (and its keys wiped) after the lock is dropped
  return *this;
}

absl::StatusOr<Keyring> Keyring::Create(const std::filesystem::path& path, Env* env) {
  auto first = std::make_shared<StoredKey>();
  first->info = {.id = 1, .created_at_us = env->NowMicros()};
  env->RandomBytes(first->key);

  // O_EXCL also refuses a dangling symlink at `path` rather than following it.
  int raw = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, kFileMode);
  if (raw < 0) return ErrnoStatus(errno, "cannot create", path);
  FdCloser fd(raw);

  std::string text = Serialize({{first->info, &first->key}});
  absl::Status status = FillAndClose(fd, text, path);
  WipeString(text);
  if (!status.ok()) {
    ::unlink(path.c_str());
    return status;
  }
  BULWARK_RETURN_IF_ERROR(SyncDirectoryOf(path));
  Keyring keyring;
  {
    absl::MutexLock lock(&keyring.mu_);  // released before the move out locks it again
    keyring.path_ = path;
    keyring.keys_.push_back(std::move(first));
  }
  return keyring;
}

absl::StatusOr<Keyring> Keyring::Load(const std::filesystem::path& path) {
  BULWARK_ASSIGN_OR_RETURN(KeyList keys, ReadKeys(path));
  Keyring keyring;
  {
    absl::MutexLock lock(&keyring.mu_);  // released before the move out locks it again
    keyring.path_ = path;
    keyring.keys_ = std::move(keys);
  }
  return keyring;
}

absl::StatusOr<Keyring::KeyList> Keyring::ReadKeys(const std::filesystem::path& path) {
  // O_NONBLOCK keeps a FIFO planted at `path` from hanging the open; it is refused below.
  int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) return ErrnoStatus(errno, "cannot open", path);
  FdCloser fd(raw);

  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(Describe(path), " is not a regular file"));
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return absl::PermissionDeniedError(absl::StrCat(Describe(path), " has mode ", mode,
                                                    "; it must not be accessible to group or others "
                                                    "(chmod 600)"));
  }
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > kMaxKeyringFileBytes) {
    return absl::DataLossError(
        absl::StrCat(Describe(path), " is ", st.st_size, " bytes; the limit is ", kMaxKeyringFileBytes));
  }

  // Read at most one byte past the limit, in case the file grew after fstat.
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t used = 0;
  while (used < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + used, text.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status status = ErrnoStatus(errno, "cannot read", path);
      WipeString(text);
      return status;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
    if (used > kMaxKeyringFileBytes) {
      WipeString(text);
      return absl::DataLossError(
          absl::StrCat(Describe(path), " grew past ", kMaxKeyringFileBytes, " bytes while being read"));
    }
    if (used == text.size()) text.resize(std::min(text.size() * 2, kMaxKeyringFileBytes + 1));
  }
  absl::StatusOr<KeyList> keys = ParseKeys(std::string_view(text.data(), used), path);
  WipeString(text);
  return keys;
}

absl::StatusOr<Keyring::KeyList> Keyring::ParseKeys(std::string_view text,
                                                    const std::filesystem::path& path) {
  auto malformed = [&path](absl::string_view why) {
    return absl::DataLossError(absl::StrCat(Describe(path), " is malformed: ", why));
  };

  nlohmann::json doc = nlohmann::json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  // Wipes the hex key strings held by `doc` on every return path.
  struct DocWiper {
    nlohmann::json& doc;
    ~DocWiper() {
      if (!doc.is_object()) return;
      auto keys = doc.find("keys");
      if (keys == doc.end() || !keys->is_array()) return;
      for (auto& item : *keys) {
        if (!item.is_object()) continue;
        auto key = item.find("key");
        if (key != item.end() && key->is_string()) WipeString(key->get_ref<std::string&>());
      }
    }
  } wiper{doc};

  BULWARK_RETURN_IF_ERROR(CheckKeyringHeader(doc, path));
  const auto keys = doc.find("keys");

  KeyList out;
  out.reserve(keys->size());
  for (size_t i = 0; i < keys->size(); ++i) {
    const nlohmann::json& item = (*keys)[i];
    const uint64_t want_id = i + 1;
    const std::string where = absl::StrCat("keys[", i, "]");
    if (!item.is_object()) return malformed(absl::StrCat(where, " is not an object"));
    for (const auto& [name, value] : item.items()) {
      if (name != "id" && name != "created_at_us" && name != "key") {
        return malformed(absl::StrCat(where, " has unknown member \"", name, "\""));
      }
    }
    const auto id = item.find("id");
    if (id == item.end() || !id->is_number_unsigned() || id->get<uint64_t>() != want_id) {
      return malformed(absl::StrCat(where, ".id must be ", want_id, " (ids are 1, 2, 3, ... in order)"));
    }
    const auto created = item.find("created_at_us");
    if (created == item.end() || !created->is_number_integer() ||
        (created->is_number_unsigned() &&
         created->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))) {
      return malformed(absl::StrCat(where, ".created_at_us must be a 64-bit integer"));
    }
    const auto hex = item.find("key");
    if (hex == item.end() || !hex->is_string() || hex->get_ref<const std::string&>().size() != 64) {
      return malformed(absl::StrCat(where, ".key must be 64 hex characters"));
    }
    std::optional<std::string> bytes = HexDecode(hex->get_ref<const std::string&>());
    if (!bytes.has_value()) return malformed(absl::StrCat(where, ".key must be 64 hex characters"));

    auto stored = std::make_shared<StoredKey>();
    stored->info = {.id = static_cast<uint32_t>(want_id), .created_at_us = created->get<int64_t>()};
    std::copy(bytes->begin(), bytes->end(), stored->key.begin());
    WipeString(*bytes);
    out.push_back(std::move(stored));
  }
  return out;
}

absl::StatusOr<uint32_t> Keyring::Rotate(Env* env) {
  absl::MutexLock rotate_lock(&rotate_mu_);  // one rotation of this object at a time
  std::filesystem::path path;
  KeyList current;  // only Rotate and move assignment change keys_, and both hold rotate_mu_
  {
    absl::ReaderMutexLock lock(&mu_);
    path = path_;
    current = keys_;
  }
  if (current.empty()) {
    return absl::FailedPreconditionError("cannot rotate an empty keyring; use Keyring::Create or Load");
  }
  if (current.size() >= kMaxKeyringKeys) {
    return absl::ResourceExhaustedError(
        absl::StrCat(Describe(path), " already holds the maximum of ", kMaxKeyringKeys, " keys"));
  }

  // Serialize rotations between processes; the lock is released when `lock` closes.
  const std::filesystem::path lock_path = path.string() + ".lock";
  int raw_lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, kFileMode);
  if (raw_lock < 0) return ErrnoStatus(errno, "cannot open lock file", lock_path);
  FdCloser lock(raw_lock);
  ::fchmod(lock.get(), kFileMode);  // best effort: a restrictive umask must not lock out the owner
  while (::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoStatus(errno, "cannot lock", lock_path);
  }

  // Refuse to drop a key that another process added since this object was loaded.
  BULWARK_ASSIGN_OR_RETURN(const KeyList on_disk, ReadKeys(path));
  bool same = on_disk.size() == current.size();
  for (size_t i = 0; same && i < current.size(); ++i) {
    same = on_disk[i]->info.id == current[i]->info.id &&
           on_disk[i]->info.created_at_us == current[i]->info.created_at_us &&
           CRYPTO_memcmp(on_disk[i]->key.data(), current[i]->key.data(), current[i]->key.size()) == 0;
  }
  if (!same) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(path), " changed on disk since it was loaded; load it again and retry"));
  }

  KeyList next = current;  // shares the keys; no key bytes are copied
  auto added = std::make_shared<StoredKey>();
  added->info = {.id = static_cast<uint32_t>(current.size() + 1), .created_at_us = env->NowMicros()};
  env->RandomBytes(added->key);
  const uint32_t new_id = added->info.id;
  next.push_back(std::move(added));

  BULWARK_RETURN_IF_ERROR(Save(path, next));
  // The file now holds the new key, so this object must too, even if the fsync below fails.
  {
    absl::MutexLock lock(&mu_);
    keys_.swap(next);
  }
  BULWARK_RETURN_IF_ERROR(SyncDirectoryOf(path));
  return new_id;
}

absl::Status Keyring::Save(const std::filesystem::path& path, const KeyList& keys) {
  std::vector<KeyView> views;
  for (const auto& k : keys) views.push_back({k->info, &k->key});

  // The temp file lives in the keyring's directory so that rename is atomic.
  std::string temp = path.string() + ".tmp.XXXXXX";
  int raw = ::mkostemp(temp.data(), O_CLOEXEC);  // creates with O_EXCL and mode 0600
  if (raw < 0) return ErrnoStatus(errno, "cannot create temp file next to", path);
  FdCloser fd(raw);

  std::string text = Serialize(views);
  absl::Status status = FillAndClose(fd, text, temp);
  WipeString(text);
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, "cannot rename temp file over", path);
  }
  if (!status.ok()) ::unlink(temp.c_str());
  return status;
}

uint32_t Keyring::newest_key_id() const {
  absl::ReaderMutexLock lock(&mu_);
  return keys_.empty() ? 0 : keys_.back()->info.id;
}

std::shared_ptr<const HmacKey> Keyring::Find(uint32_t key_id) const {
  absl::ReaderMutexLock lock(&mu_);
  // Ids are 1..size in order (validated by Load), so the id is the index plus one.
  if (key_id == 0 || key_id > keys_.size()) return nullptr;
  const std::shared_ptr<const StoredKey>& stored = keys_[key_id - 1];
  return std::shared_ptr<const HmacKey>(stored, &stored->key);  // shares ownership of the StoredKey
}

std::vector<KeyInfo> Keyring::List() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<KeyInfo> out;
  out.reserve(keys_.size());
  for (const auto& k : keys_) out.push_back(k->info);
  return out;
}

std::filesystem::path Keyring::path() const {
  absl::ReaderMutexLock lock(&mu_);
  return path_;
}

}  // namespace bulwark
