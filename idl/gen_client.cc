#include "idl/gen_client.h"

#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "idl/checks.h"
#include "idl/gen_stub.h"
#include "idl/writer.h"
#include "protocol/layout.h"

namespace ninf::idl {
namespace {

// Fortran's longest name (F2008 and later), and the most arguments module
// ninf's Ninf_call takes after the routine's name (a1 ... a30 in ninf.f90).
constexpr std::size_t kFortranMaxName = 63;
constexpr std::size_t kFortranMaxArgs = 30;

// The IDL file's name without its folder: the outputs are installed, and
// the build's paths mean nothing there.
std::string SourceName(const IdlFile &file) {
  return std::filesystem::path(file.path).filename().string();
}

std::string Lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Upper(std::string s) {
  for (char &c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// `s` with every character that cannot be in a C or Fortran name made '_'.
std::string NameSafe(std::string s) {
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s;
}

// The wrapper's name for each parameter of `d`: the IDL's, made unique
// against `reserved` (the names the wrapper's body needs) and each other
// by appending '_'. Fortran folds letter case and wants a letter first.
std::vector<std::string> ParamNames(const Define &d, const std::set<std::string> &reserved,
                                    bool fortran) {
  std::set<std::string> taken;
  for (const std::string &r : reserved) taken.insert(fortran ? Lower(r) : r);
  std::vector<std::string> names;
  for (const Param &p : d.params) {
    std::string name = fortran && p.name[0] == '_' ? "p" + p.name : p.name;
    while (taken.count(fortran ? Lower(name) : name)) name += "_";
    taken.insert(fortran ? Lower(name) : name);
    names.push_back(name);
  }
  return names;
}

std::string WrapperName(const Define &d, bool async) {
  return "ninf_" + d.name + (async ? "_async" : "");
}

// ---- C ----

// `p` in ninf_NAME's prototype, as Ninf_call reads it (ninf.h): IN scalars
// by value, strings as text, arrays and pointers by address (const when the
// call only reads them).
std::string CDeclaration(const Param &p, const std::string &name) {
  if (p.type == Type::kString) return "const char *" + name;
  if (IsScalar(p)) return std::string(CType(p.type)) + " " + name;
  return std::string(p.mode == Mode::kIn ? "const " : "") + CType(p.type) + " *" + name;
}

void WriteCWrapper(Writer &w, const Define &d, bool async) {
  std::vector<std::string> names = ParamNames(d, {"Ninf_call", "Ninf_call_async"}, false);
  std::vector<std::string> decls, args = {Writer::Quote(d.name)};
  for (std::size_t i = 0; i < d.params.size(); ++i) {
    decls.push_back(CDeclaration(d.params[i], names[i]));
    args.push_back(names[i]);
  }
  if (decls.empty()) decls.push_back("void");
  const std::string head = "static inline int " + WrapperName(d, async) + "(";
  w.Packed(head, decls, ") {", std::string(head.size(), ' '));
  const std::string call = "  return " + std::string(async ? "Ninf_call_async(" : "Ninf_call(");
  w.Packed(call, args, ");", std::string(call.size(), ' '));
  w.Line("}");
}

// ---- Fortran ----

// The Fortran type of `p`'s dummy. Integer scalars are default INTEGER, as
// LAPACK's are (the library converts them to the IDL's size, range-checked),
// and so are `int` arrays; other integer arrays have the IDL's own kind.
std::string FortranType(const Param &p) {
  switch (p.type) {
    case Type::kString:
      return "character(len=*)";
    case Type::kChar:
      return "character(len=1)";
    case Type::kInt:
      return "integer";
    case Type::kShort:
      return IsScalar(p) || p.pointer ? "integer" : "integer(c_short)";
    case Type::kLong:
      return IsScalar(p) || p.pointer ? "integer" : "integer(c_long)";
    case Type::kFloat:
      return "real(c_float)";
    case Type::kDouble:
      return "real(c_double)";
    case Type::kScomplex:
      return "complex(c_float_complex)";
    case Type::kDcomplex:
      return "complex(c_double_complex)";
  }
  return "integer";
}

// The intent of `p`'s dummy; WORK arrays take any array and none.
std::string FortranIntent(Mode mode) {
  switch (mode) {
    case Mode::kIn:
      return ", intent(in)";
    case Mode::kOut:
      return ", intent(out)";
    case Mode::kInout:
      return ", intent(inout)";
    case Mode::kWork:
      return "";
  }
  return "";
}

// The kind constant a type names, "c_double" of "real(c_double)", or "".
std::string KindOf(const std::string &type) {
  std::size_t open = type.find("(c_");
  return open == std::string::npos ? "" : type.substr(open + 1, type.find(')') - open - 1);
}

// Writes `indent head`, `items` and `tail`, continued with '&' past
// kMaxLine columns.
void FortranList(Writer &w, const std::string &indent, const std::string &head,
                 const std::vector<std::string> &items, const std::string &tail) {
  w.Packed(indent + head, items, tail, indent + "    ", " &");
}

// `text` as Fortran comment lines, broken after ", " near kMaxLine columns.
void FortranComment(Writer &w, const std::string &text) {
  WrapComment(w, text, "  ! ", "  !     ");
}

// The names a dummy must not take: what the function's body uses.
std::set<std::string> FortranReserved(const Define &d, bool async) {
  return {WrapperName(d, async),
          "ninf_call",
          "ninf_call_async",
          "ninf_status",
          "ninf_id",
          "c_short",
          "c_long",
          "c_float",
          "c_double",
          "c_float_complex",
          "c_double_complex"};
}

void WriteFortranFunction(Writer &w, const Define &d, bool async) {
  std::vector<std::string> names = ParamNames(d, FortranReserved(d, async), true);
  const std::string result = async ? "ninf_id" : "ninf_status";
  FortranList(w, "  ", "function " + WrapperName(d, async) + "(", names,
              ") result(" + result + ")");
  for (std::size_t i = 0; i < d.params.size(); ++i) {
    const Param &p = d.params[i];
    bool array = !IsScalar(p) && !p.pointer;
    std::string attributes =
        FortranIntent(p.mode) + (async && !IsScalar(p) ? ", asynchronous" : "");
    w.Line("    " + FortranType(p) + attributes + " :: " + names[i] + (array ? "(..)" : ""));
  }
  w.Line("    integer :: " + result);
  std::vector<std::string> args = {"'" + d.name + "'"};
  args.insert(args.end(), names.begin(), names.end());
  FortranList(w, "    ", result + " = " + (async ? "Ninf_call_async(" : "Ninf_call("), args, ")");
  w.Line("  end function " + WrapperName(d, async));
}

// Reports what keeps `c` out of a Fortran module (see the header).
void CheckFortranNames(const Compilation &c, Diagnostics *diag) {
  const IdlFile &file = c.file;
  if (FortranModuleName(file).size() > kFortranMaxName)
    diag->Error(file.module_loc, "the Fortran module name '" + FortranModuleName(file) +
                                     "' is longer than Fortran's 63 characters");
  std::map<std::string, const Define *> seen;
  for (const Define &d : file.defines) {
    auto [first, fresh] = seen.emplace(Lower(d.name), &d);
    if (!fresh)
      diag->Error(d.loc, "Define '" + d.name + "' and Define '" + first->second->name +
                             "' differ only in letter case: Fortran names ignore case, so one "
                             "Fortran module cannot hold both");
    if (WrapperName(d, true).size() > kFortranMaxName)
      diag->Error(d.loc, "the Fortran name '" + WrapperName(d, true) +
                             "' is longer than Fortran's 63 characters");
    if (d.params.size() > kFortranMaxArgs)
      diag->Error(d.loc, "'" + d.name + "' has " + std::to_string(d.params.size()) +
                             " parameters, and module ninf's Ninf_call takes at most 30");
    for (const std::string &name : ParamNames(d, FortranReserved(d, true), true))
      if (name.size() > kFortranMaxName)
        diag->Error(d.loc, "parameter '" + name + "' of '" + d.name +
                               "' is longer than Fortran's 63 characters");
  }
}

// The kind constants the module's dummies use, for its `use` line.
std::set<std::string> KindsUsed(const IdlFile &file) {
  std::set<std::string> kinds;
  for (const Define &d : file.defines)
    for (const Param &p : d.params)
      if (std::string kind = KindOf(FortranType(p)); !kind.empty()) kinds.insert(kind);
  return kinds;
}

void WriteFortranHead(Writer &w, const Compilation &c, const std::string &module) {
  w.Line("! " + module + ".f90 - typed calls of the Ninf module " + c.file.module +
         ", generated by ninf-gen from " + SourceName(c.file) + "; do not edit.");
  w.Line("!");
  w.Line("! `use " + module + "`, then ierr = ninf_NAME(args) calls the remote NAME with the");
  w.Line("! arguments of the local routine: the compiler checks each one's type, kind and");
  w.Line("! intent, and the library checks ranks, contiguity and sizes as Ninf_call does.");
  w.Line("! id = ninf_NAME_async(args) starts the call (Ninf_wait(id) waits for it).");
  w.Line("module " + module);
  std::set<std::string> kinds = KindsUsed(c.file);
  if (!kinds.empty()) {
    FortranList(w, "  ", "use, intrinsic :: iso_c_binding, only: ",
                std::vector<std::string>(kinds.begin(), kinds.end()), "");
  }
  w.Line("  use ninf, only: Ninf_call, Ninf_call_async");
  w.Line("  implicit none");
  w.Line("  private");
  std::vector<std::string> procedures;
  for (const Define &d : c.file.defines) {
    procedures.push_back(WrapperName(d, false));
    procedures.push_back(WrapperName(d, true));
  }
  if (!procedures.empty()) FortranList(w, "  ", "public :: ", procedures, "");
}

}  // namespace

std::string FortranModuleName(const IdlFile &file) {
  std::string name = "ninf_" + NameSafe(file.module);
  for (const Define &d : file.defines)
    if (Lower(WrapperName(d, false)) == Lower(name) || Lower(WrapperName(d, true)) == Lower(name))
      return name + "_calls";
  return name;
}

std::string GenerateClientHeader(const Compilation &c) {
  Writer w;
  const std::string guard = "NINF_CALLS_" + Upper(NameSafe(c.file.module)) + "_H";
  w.Line("/*");
  w.Line(" * Typed calls of the Ninf module " + CommentSafe(c.file.module) +
         ", generated by ninf-gen from " + CommentSafe(SourceName(c.file)) + "; do not edit.");
  w.Line(" *");
  w.Line(" * ninf_NAME(args) is Ninf_call(\"NAME\", args), and ninf_NAME_async(args) is");
  w.Line(" * Ninf_call_async(\"NAME\", args): the local routine's arguments in the IDL's order,");
  w.Line(" * with a prototype, so that the compiler counts and converts them (1 where a double");
  w.Line(" * goes is 1.0) and warns of a wrong pointer, which Ninf_call's varargs cannot do.");
  w.Line(" * An array of any rank is passed as the address of its first element (&a[0][0]).");
  w.Line(" */");
  w.Line("#ifndef " + guard);
  w.Line("#define " + guard);
  w.Line();
  w.Line("#include <ninf.h>");
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const Define &d = c.file.defines[i];
    w.Line();
    w.Line("/*");
    WrapComment(w, CommentSafe(Signature(c.outputs[i].iface)));
    if (!d.description.value.empty()) WrapComment(w, CommentSafe(d.description.value));
    w.Line(" */");
    WriteCWrapper(w, d, false);
    WriteCWrapper(w, d, true);
  }
  w.Line();
  w.Line("#endif");
  return w.Take();
}

bool GenerateFortranModule(const Compilation &c, Diagnostics *diag, std::string *out) {
  CheckFortranNames(c, diag);
  if (!diag->ok()) return false;
  const std::string module = FortranModuleName(c.file);
  Writer w;
  WriteFortranHead(w, c, module);
  w.Line("contains");
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const Define &d = c.file.defines[i];
    w.Line();
    FortranComment(w, Signature(c.outputs[i].iface));
    if (!d.description.value.empty()) FortranComment(w, d.description.value);
    WriteFortranFunction(w, d, false);
    WriteFortranFunction(w, d, true);
  }
  w.Line("end module " + module);
  *out = w.Take();
  return true;
}

}  // namespace ninf::idl
