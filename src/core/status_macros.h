// Status propagation macros, in the manner of Abseil's internal status_macros.h (which Debian's
// 2022 Abseil does not install).
//
//   BULWARK_RETURN_IF_ERROR(store->Put(row));            // returns the status if it is not OK
//   BULWARK_ASSIGN_OR_RETURN(auto rows, store->Scan());  // declares `rows`, or returns the error
//   BULWARK_ASSIGN_OR_RETURN(existing, store->Get(id));  // assigns to an existing variable
//
// Both work in functions that return absl::Status or any absl::StatusOr<T>.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <utility>

#define BULWARK_STATUS_CONCAT_INNER_(a, b) a##b
#define BULWARK_STATUS_CONCAT_(a, b) BULWARK_STATUS_CONCAT_INNER_(a, b)

#define BULWARK_RETURN_IF_ERROR(expr)                                     \
  do {                                                                    \
    if (::absl::Status bulwark_status_ = (expr); !bulwark_status_.ok()) { \
      return bulwark_status_;                                             \
    }                                                                     \
  } while (false)

#define BULWARK_ASSIGN_OR_RETURN(lhs, expr) \
  BULWARK_ASSIGN_OR_RETURN_IMPL_(BULWARK_STATUS_CONCAT_(bulwark_statusor_, __LINE__), lhs, expr)

#define BULWARK_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()
