// Size-checked whole-file reads for the model directory.
#include "embed/bert/bounded_file.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bulwark::bert {

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return absl::NotFoundError(absl::StrCat("bert: ", path, " does not exist"));
    return absl::UnavailableError(absl::StrCat("bert: cannot open ", path, ": ", std::strerror(error)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0) return absl::UnavailableError(absl::StrCat("bert: cannot stat ", path));
  if (!S_ISREG(info.st_mode))
    return absl::FailedPreconditionError(absl::StrCat("bert: ", path, " is not a file"));
  auto too_large = [&] {
    return absl::FailedPreconditionError(
        absl::StrCat("bert: ", path, " is larger than ", max_bytes, " bytes"));
  };
  if (static_cast<uint64_t>(info.st_size) > max_bytes) return too_large();
  std::string contents(static_cast<size_t>(info.st_size), '\0');
  size_t filled = 0;
  while (true) {
    if (filled == contents.size()) {
      // The file may have grown since fstat: probe for more, within the limit.
      if (contents.size() >= max_bytes) {
        char probe;
        const ssize_t extra = ::read(fd, &probe, 1);
        if (extra > 0) return too_large();
        if (extra == 0) break;
        if (errno == EINTR) continue;
        return absl::UnavailableError(absl::StrCat("bert: cannot read ", path, ": ", std::strerror(errno)));
      }
      contents.resize(std::min<uint64_t>(max_bytes, contents.size() + 4096));
    }
    const ssize_t got = ::read(fd, contents.data() + filled, contents.size() - filled);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("bert: cannot read ", path, ": ", std::strerror(errno)));
    }
    filled += static_cast<size_t>(got);
  }
  contents.resize(filled);
  return contents;
}

}  // namespace bulwark::bert
