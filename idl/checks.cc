#include "idl/checks.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "idl/parser.h"
#include "protocol/utf8.h"

namespace ninf::idl {
namespace {

// Names a generated stub cannot use for a C variable or function.
constexpr std::string_view kCKeywords[] = {
    "auto",       "break",     "case",           "char",
    "const",      "continue",  "default",        "do",
    "double",     "else",      "enum",           "extern",
    "float",      "for",       "goto",           "if",
    "inline",     "int",       "long",           "register",
    "restrict",   "return",    "short",          "signed",
    "sizeof",     "static",    "struct",         "switch",
    "typedef",    "union",     "unsigned",       "void",
    "volatile",   "while",     "_Bool",          "_Complex",
    "_Imaginary", "_Alignas",  "_Alignof",       "_Atomic",
    "_Generic",   "_Noreturn", "_Static_assert", "_Thread_local",
};

bool IsCKeyword(std::string_view name) {
  return std::find(std::begin(kCKeywords), std::end(kCKeywords), name) != std::end(kCKeywords);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string Where(const Location &loc) { return loc.file + ":" + std::to_string(loc.line); }

// Reports every name in `e` that is not a parameter usable in a size.
// `context` completes "unknown identifier 'x' in ..." and "... uses 'x'".
void CheckExpr(const Define &d, const Expr &e, const std::string &context, Diagnostics *diag) {
  if (e.op == ExprOp::kName) {
    int index = FindParam(d, e.name);
    if (index < 0)
      diag->Error(e.loc, "unknown identifier '" + e.name + "' in " + context);
    else if (!IsSizeParam(d.params[static_cast<std::size_t>(index)]))
      diag->Error(e.loc, context + " uses '" + e.name +
                             "', which is not an IN scalar of integer type (char, short, int or "
                             "long)");
  }
  for (const Expr &operand : e.operands) CheckExpr(d, operand, context, diag);
}

void CheckParam(const Define &d, const Param &p, Diagnostics *diag) {
  if (IsCKeyword(p.name)) diag->Error(p.loc, "parameter name '" + p.name + "' is a C keyword");
  if (d.body == Body::kCode && p.name == "args")
    diag->Error(p.loc, "parameter name 'args' is reserved in a Define with a C body");
  if (p.name == kCommArg)
    diag->Error(p.loc,
                std::string("parameter name '") + kCommArg +
                    "' is reserved (it passes the communicator of a Backend \"MPI\" routine)");
  bool scalar = p.dims.empty() && !p.pointer;
  if (p.type == Type::kString) {
    if (!scalar || p.mode != Mode::kIn)
      diag->Error(p.loc, "string parameter '" + p.name + "' must be an IN scalar");
  } else if (scalar && p.mode != Mode::kIn) {
    diag->Error(p.loc, std::string(ModeName(p.mode)) + " scalar '" + p.name +
                           "' must be a pointer ('" + ModeName(p.mode) + " " + TypeName(p.type) +
                           " *" + p.name + "') or an array");
  }
  for (const Dim &dim : p.dims)
    if (!dim.omitted) CheckExpr(d, dim.expr, "a dimension of '" + p.name + "'", diag);
}

// An `IN char` handed to a Fortran routine: Fortran passes a CHARACTER with
// a hidden length argument, which the stub appends for strings only, so the
// routine would read whatever follows as the length (docs/idl.md). Refused,
// once per parameter, at its first place in the Calls list.
void CheckFortranChars(const Define &d, Diagnostics *diag) {
  std::vector<int> reported;
  for (const CallArg &arg : d.call_args) {
    const int index = arg.name == kCommArg ? -1 : FindParam(d, arg.name);
    if (index < 0 || std::find(reported.begin(), reported.end(), index) != reported.end()) continue;
    const Param &p = d.params[static_cast<std::size_t>(index)];
    if (p.type != Type::kChar || p.mode != Mode::kIn || !p.dims.empty() || p.pointer) continue;
    reported.push_back(index);
    diag->Error(
        arg.loc,
        "IN char '" + p.name + "' is passed to the Fortran routine '" + d.callee +
            "', which gets no hidden length for it (only strings have one), so a "
            "CHARACTER argument would read a wrong length: declare it 'IN string " +
            p.name +
            "' (a C client then passes a string such as \"N\", a Fortran one a CHARACTER), or "
            "'IN char " +
            p.name + "[1]' if the routine's argument is not a CHARACTER");
  }
}

void CheckDefine(const Define &d, Diagnostics *diag) {
  for (std::size_t i = 0; i < d.params.size(); ++i) {
    const Param &p = d.params[i];
    if (FindParam(d, p.name) != static_cast<int>(i))
      diag->Error(p.loc, "duplicate parameter '" + p.name + "' in Define '" + d.name + "'");
    CheckParam(d, p, diag);
  }
  if (d.has_calc_order) CheckExpr(d, d.calc_order, "CalcOrder", diag);
  // The description travels in a protobuf string field: clients refuse the
  // whole interface over one byte that is not UTF-8.
  if (!IsValidUtf8(d.description.value))
    diag->Error(d.description.loc, "the description of Define '" + d.name + "' is not valid UTF-8");
  if (d.backend.present && !d.backend.value.empty() && !EqualsIgnoreCase(d.backend.value, "MPI"))
    diag->Error(d.backend.loc, "unknown Backend '" + d.backend.value + "' (expected \"MPI\")");
  if (d.distribute.present && !IsMpi(d))
    diag->Error(d.distribute.loc, "Distribute is for Backend \"MPI\" routines only");
  else if (d.distribute.present && !EqualsIgnoreCase(d.distribute.value, "broadcast") &&
           !EqualsIgnoreCase(d.distribute.value, "root"))
    diag->Error(d.distribute.loc, "unknown Distribute '" + d.distribute.value +
                                      "' (expected \"broadcast\" or \"root\")");
  if (d.reuse.present && !EqualsIgnoreCase(d.reuse.value, "yes") &&
      !EqualsIgnoreCase(d.reuse.value, "no"))
    diag->Error(d.reuse.loc, "unknown Reuse '" + d.reuse.value + "' (expected \"yes\" or \"no\")");
  if (d.body != Body::kCalls) return;
  if (!EqualsIgnoreCase(d.language.value, "C") && !EqualsIgnoreCase(d.language.value, "Fortran"))
    diag->Error(d.language.loc, "unknown language '" + d.language.value +
                                    "' in Calls (expected \"C\" or \"Fortran\")");
  if (IsCKeyword(d.callee))
    diag->Error(d.callee_loc, "routine name '" + d.callee + "' is a C keyword");
  for (const CallArg &arg : d.call_args)
    if (arg.name == kCommArg && !IsMpi(d))
      diag->Error(arg.loc, std::string(kCommArg) +
                               " in Calls passes an MPI communicator: only with Backend \"MPI\"");
    else if (arg.name != kCommArg && FindParam(d, arg.name) < 0)
      diag->Error(arg.loc, "unknown identifier '" + arg.name + "' in Calls (not a parameter of '" +
                               d.name + "')");
  if (IsFortran(d)) CheckFortranChars(d, diag);
}

}  // namespace

int FindParam(const Define &d, std::string_view name) {
  for (std::size_t i = 0; i < d.params.size(); ++i)
    if (d.params[i].name == name) return static_cast<int>(i);
  return -1;
}

bool IsScalar(const Param &p) { return p.dims.empty() && !p.pointer; }

bool IsSizeParam(const Param &p) {
  bool integer = InfoOf(p.type).cls == NINF_CLASS_INTEGER;
  return integer && p.mode == Mode::kIn && p.dims.empty() && !p.pointer;
}

bool IsFortran(const Define &d) {
  return d.body == Body::kCalls && EqualsIgnoreCase(d.language.value, "Fortran");
}

bool IsMpi(const Define &d) { return !d.backend.value.empty(); }

bool RootOnly(const Define &d) { return EqualsIgnoreCase(d.distribute.value, "root"); }

bool ForbidsReuse(const Define &d) { return EqualsIgnoreCase(d.reuse.value, "no"); }

void CheckFile(const IdlFile &file, Diagnostics *diag) {
  std::map<std::string, const Define *> seen;
  for (const Define &d : file.defines) {
    auto [it, inserted] = seen.emplace(d.name, &d);
    if (!inserted)
      diag->Error(d.loc, "duplicate Define '" + d.name + "' (first defined at " +
                             Where(it->second->loc) + ")");
    CheckDefine(d, diag);
  }
}

}  // namespace ninf::idl
