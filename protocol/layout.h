// Argument layout: from an interface and the values of its IN scalars, how
// many bytes each array parameter has. Client and executable both compute it
// and must agree; neither trusts the other's numbers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ninf.pb.h"
#include "protocol/ninf_types.h"
#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// How deeply a dimension or CalcOrder expression may nest (operators inside
// operators). ninf-gen refuses deeper ones and every peer refuses them on the
// wire, so that evaluating one cannot exhaust the stack.
constexpr int kMaxExprDepth = 256;

// Bytes of one element of `type`, from the type table (0 for TYPE_STRING,
// which is never an array, and for a type outside the table).
NINF_PROTOCOL_API uint64_t ElementSize(wire::Type type);

NINF_PROTOCOL_API bool IsIntegerType(wire::Type type);

// An argument mode as the IDL writes it ("IN", "OUT", "INOUT", "WORK").
NINF_PROTOCOL_API const char *ModeName(wire::Mode m);
inline bool IsArray(const wire::Param &p) { return p.dims_size() > 0; }
inline bool IsInScalar(const wire::Param &p) { return !IsArray(p) && p.mode() == wire::MODE_IN; }
// Sent by the client: IN and INOUT arrays.
inline bool SendsArray(const wire::Param &p) {
  return IsArray(p) && (p.mode() == wire::MODE_IN || p.mode() == wire::MODE_INOUT);
}
// Returned by the executable: OUT and INOUT arrays.
inline bool ReturnsArray(const wire::Param &p) {
  return IsArray(p) && (p.mode() == wire::MODE_OUT || p.mode() == wire::MODE_INOUT);
}

// Evaluates a prefix-order expression with checked 64-bit arithmetic.
// `values[i]` is the value of parameter i (meaningful for IN integer
// scalars). Errors: NINF_ERR_OVERFLOW, NINF_ERR_ARGUMENT_MISMATCH (division
// by zero, negative exponent), NINF_ERR_PROTOCOL (malformed tree or a
// reference to a parameter that is not an IN integer scalar).
NINF_PROTOCOL_API Status EvalExpr(const wire::FunctionInterface &iface, const wire::Expr &expr,
                                  std::span<const int64_t> values, int64_t *out);

// Checks that an interface received from a peer is well formed: modes and
// types known, expressions well formed and referring only to IN integer
// scalars, strings only as IN scalars. Errors: NINF_ERR_PROTOCOL.
NINF_PROTOCOL_API Status ValidateInterface(const wire::FunctionInterface &iface);

struct ParamLayout {
  uint64_t elements = 0;  // 0 for scalars
  uint64_t bytes = 0;     // 0 for scalars
};

struct CallLayout {
  std::vector<ParamLayout> params;
  uint64_t send_bytes = 0;    // IN + INOUT arrays
  uint64_t return_bytes = 0;  // OUT + INOUT arrays
  uint64_t total_bytes = 0;   // every array, WORK included: the executable's memory
};

// Computes each array's size. A negative dimension is an argument error;
// element counts and byte sizes that overflow 64 bits give NINF_ERR_OVERFLOW;
// total_bytes over `max_call_bytes` (0 = no limit) gives NINF_ERR_TOO_LARGE.
NINF_PROTOCOL_API Status ComputeLayout(const wire::FunctionInterface &iface,
                                       std::span<const int64_t> values, uint64_t max_call_bytes,
                                       CallLayout *out);

// An expression in the IDL's notation ("2 * n^3 / 3", "jobz == 86 ? n : 1"),
// parameters by name. Never fails: a malformed tree prints "?" where it
// breaks (ValidateInterface refuses such trees; this only prints them).
NINF_PROTOCOL_API std::string ExprText(const wire::FunctionInterface &iface,
                                       const wire::Expr &expr);

// "name(IN int n, INOUT double a[n][lda], ...)", for messages and tools:
// every dimension is printed as the IDL wrote it (an omitted one, `a[]`, is
// stored and printed as 1).
NINF_PROTOCOL_API std::string Signature(const wire::FunctionInterface &iface);

}  // namespace ninf
