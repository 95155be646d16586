// RETURN_IF_ERROR / ASSIGN_OR_RETURN for absl::Status, which open-source
// Abseil does not provide.

#ifndef VERITYD_LIB_BASE_STATUS_MACROS_H_
#define VERITYD_LIB_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr`, an absl::Status, and returns it from the enclosing
// function if it is not OK.
#define RETURN_IF_ERROR(expr)                                   \
  do {                                                          \
    ::absl::Status verity_status_macro_status = (expr);         \
    if (ABSL_PREDICT_FALSE(!verity_status_macro_status.ok())) { \
      return verity_status_macro_status;                        \
    }                                                           \
  } while (0)

// Evaluates `expr`, an absl::StatusOr<T>; returns its status if it is not OK,
// otherwise moves the value into `lhs`, which may be a declaration
// ("auto x") or an existing lvalue. `lhs` must not contain unparenthesized
// commas. Expands to several statements, so it cannot be the body of an
// unbraced if.
#define ASSIGN_OR_RETURN(lhs, expr)           \
  VERITY_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL( \
      VERITY_STATUS_MACROS_CONCAT(verity_statusor_, __LINE__), lhs, expr)

#define VERITY_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                               \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                             \
    return std::move(statusor).status();                                \
  }                                                                     \
  lhs = *std::move(statusor)

#define VERITY_STATUS_MACROS_CONCAT_INNER(a, b) a##b
#define VERITY_STATUS_MACROS_CONCAT(a, b) \
  VERITY_STATUS_MACROS_CONCAT_INNER(a, b)

#endif  // VERITYD_LIB_BASE_STATUS_MACROS_H_
