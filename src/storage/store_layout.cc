#include "storage/store_layout.h"

#include <system_error>
#include <utility>

namespace bulwark {

StoreLayout::StoreLayout(std::filesystem::path dir, std::filesystem::path keyring_override)
    : dir_(std::move(dir)), keyring_override_(std::move(keyring_override)) {}

StoreLayout StoreLayout::ForDatabase(const std::filesystem::path& database) {
  return StoreLayout(database.has_parent_path() ? database.parent_path() : std::filesystem::path("."));
}

std::filesystem::path StoreLayout::keyring() const {
  return keyring_override_.empty() ? dir_ / kKeyringFile : keyring_override_;
}

bool StoreLayout::StoreExists() const {
  std::error_code ec;
  return std::filesystem::exists(database(), ec);
}

}  // namespace bulwark
