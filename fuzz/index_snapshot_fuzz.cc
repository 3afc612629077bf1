// libFuzzer target for the index snapshot reader (store/index_snapshot.h): any bytes in index.snap
// are refused (NotFound, FailedPrecondition, DataLoss or ResourceExhausted) without a crash, a
// hang, a read past the file or an allocation beyond the file's size; none passes the MAC, so none
// is returned. Every count in the file is read and bounded before the MAC is checked at the end,
// which is what this exercises. The same bytes are then read as a BM25 body
// (ReadSnapshotLexical): its counts are bounded by the body's size and its digest refuses it
// before Bm25Index::Restore sees a byte.
//
//   scripts/fuzz [SECONDS]
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "bulwark/env.h"
#include "provenance/keyring.h"
#include "store/index_snapshot.h"

namespace {

constexpr int kDimension = 8;  // the seed corpus's

const bulwark::Keyring& FuzzKeyring() {
  static const bulwark::Keyring* const keyring = [] {
    char dir[] = "/tmp/bulwark-snapshot-fuzz-XXXXXX";
    if (mkdtemp(dir) == nullptr) std::abort();
    const std::filesystem::path path = std::filesystem::path(dir) / "keyring.json";
    auto created = bulwark::Keyring::Create(path, bulwark::Env::Default());
    if (!created.ok()) std::abort();
    std::filesystem::remove_all(dir);
    return new bulwark::Keyring(*std::move(created));
  }();
  return *keyring;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const bulwark::Keyring& keyring = FuzzKeyring();
  char path[] = "/tmp/bulwark-snapshot-fuzz-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return 0;
  const bool written = write(fd, data, size) == static_cast<ssize_t>(size);
  close(fd);
  if (written) {
    // The seed's lexical terms, so that its BM25 section is restored (Bm25Index::Restore's checks).
    auto snapshot = bulwark::ReadIndexSnapshot(path, kDimension, keyring,
                                               [](std::string_view, size_t rows) { return rows; },
                                               {.terms = "fuzz-terms"});
    if (snapshot.ok()) std::abort();  // no input can carry this run's fresh key's MAC
    const absl::StatusCode code = snapshot.status().code();
    if (code != absl::StatusCode::kDataLoss && code != absl::StatusCode::kFailedPrecondition &&
        code != absl::StatusCode::kResourceExhausted) {
      std::abort();
    }
    const int body = open(path, O_RDONLY | O_CLOEXEC);
    if (body >= 0) {
      bulwark::SnapshotLexicalSection section{.fd = std::make_shared<const int>(body),
                                              .key_id = keyring.newest_key_id(),
                                              .offset = 0,
                                              .bytes = size};
      if (bulwark::ReadSnapshotLexical(section, keyring, {}).status().code() != absl::StatusCode::kDataLoss) {
        std::abort();  // no input matches an all-zero digest
      }
      close(body);
    }
  }
  unlink(path);
  return 0;
}
