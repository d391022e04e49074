// The Ninf IDL syntax tree: plain structs filled by the parser, read by the
// checks and the generators. Nothing here knows about protobuf; the
// generators translate into ninf.wire types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/ninf_types.h"

namespace ninf::idl {

// A position in the ORIGINAL source (after following cpp line markers).
// `offset` is the position in the preprocessed text; it only orders
// diagnostics in reading order.
struct Location {
  std::string file;
  int line = 0;
  int col = 0;  // 1-based, in bytes
  std::size_t offset = 0;
};

enum class ExprOp {
  kConst,  // value
  kName,   // name: a parameter
  kNeg,
  kNot,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kPow,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kAnd,
  kOr,
  kCond,  // operands: condition, then, else
};

struct Expr {
  ExprOp op = ExprOp::kConst;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> operands;
  Location loc;
  int depth = 1;  // nodes on the longest path down from here, this one included
};

enum class Mode { kIn, kOut, kInout, kWork };
// The IDL's types, from the type table (ninf_types.h): Type::kDouble has the
// value of NINF_TYPE_DOUBLE and of the wire's TYPE_DOUBLE.
enum class Type {
#define NINF_IDL_TYPE_(NAME, Name, value, keyword, ctype, bytes, cls, kind) \
  k##Name = NINF_TYPE_##NAME,
  NINF_TYPE_MAP(NINF_IDL_TYPE_)
#undef NINF_IDL_TYPE_
};

// The table's row of an IDL type.
inline const ninf_type_info &InfoOf(Type type) {
  return *ninf_type_info_of(static_cast<int>(type));
}

// One dimension of an array parameter. `omitted` is the `[]` form.
struct Dim {
  bool omitted = false;
  Expr expr;
  Location loc;  // of the '['
};

struct Param {
  Mode mode = Mode::kIn;
  Type type = Type::kInt;
  std::string name;
  std::vector<Dim> dims;
  bool pointer = false;  // `T *name`
  Location loc;          // of the name
};

// A `{ ... }` block captured verbatim (without the outer braces).
struct RawText {
  std::string text;
  Location loc;  // of the first character after '{'
};

// A string literal with where it was written (for clause values).
struct StringClause {
  std::string value;
  Location loc;
  bool present = false;
};

struct CallArg {
  std::string name;  // a parameter, or kCommArg
  Location loc;
};

// The Calls argument that stands for the MPI communicator of a Backend "MPI"
// routine: MPI_Comm in C, its Fortran handle (MPI_Fint, by reference) in
// Fortran.
inline constexpr const char *kCommArg = "MPI_COMM";

enum class Body { kNone, kCalls, kCode };

struct Define {
  std::string name;
  Location loc;  // of the name
  std::vector<Param> params;
  StringClause description;
  StringClause required;
  StringClause backend;
  StringClause reuse;  // "yes" (the default) or "no": see FunctionInterface.no_reuse
  // Backend "MPI" only: "broadcast" (the default: every rank gets the
  // arrays) or "root" (only rank 0 does); see FunctionInterface.distribute.
  StringClause distribute;
  bool has_calc_order = false;
  Expr calc_order;
  Body body = Body::kNone;
  StringClause language;  // Calls "C" / "Fortran"
  std::string callee;
  Location callee_loc;
  std::vector<CallArg> call_args;
  RawText code;  // the `{ C body }`
};

struct IdlFile {
  std::string path;  // as given on the command line
  std::string module;
  Location module_loc;
  std::vector<std::string> compile_options;
  std::vector<std::string> libraries;
  std::vector<RawText> globals;
  std::vector<Define> defines;       // only those that parsed without errors
  std::vector<std::string> sources;  // the files cpp read, included ones too
};

}  // namespace ninf::idl
