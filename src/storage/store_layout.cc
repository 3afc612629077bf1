#include "storage/store_layout.h"

#include <system_error>
#include <utility>

#include "storage/storage_opener.h"  // IsPostgresLocation

namespace bulwark {

StoreLayout::StoreLayout(std::filesystem::path dir, std::filesystem::path keyring_override)
    : dir_(std::move(dir)),
      keyring_override_(std::move(keyring_override)),
      postgres_(IsPostgresLocation(dir_.native())) {}

StoreLayout StoreLayout::ForDatabase(const std::filesystem::path& database) {
  if (IsPostgresLocation(database.native())) return StoreLayout(database);
  return StoreLayout(database.has_parent_path() ? database.parent_path() : std::filesystem::path("."));
}

std::filesystem::path StoreLayout::keyring() const {
  if (!keyring_override_.empty()) return keyring_override_;
  return postgres_ ? std::filesystem::path() : dir_ / kKeyringFile;
}

bool StoreLayout::StoreExists() const {
  if (postgres_) return true;
  std::error_code ec;
  return std::filesystem::exists(database(), ec);
}

}  // namespace bulwark
