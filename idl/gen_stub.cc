#include "idl/gen_stub.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <vector>

#include "idl/checks.h"
#include "protocol/layout.h"

namespace ninf::idl {
namespace {

constexpr std::size_t kMaxLine = 100;

// Accumulates the output and counts its lines, so that a `#line` directive
// can bring compiler messages back to the generated file after user code.
class Writer {
 public:
  void Line(const std::string &s = "") { Raw(s + "\n"); }
  void Raw(const std::string &s) {
    for (char c : s) lines_ += c == '\n';
    out_ += s;
  }
  // Emits `#line` for `text` at `loc`, the text, then `#line` back here.
  void UserCode(const RawText &text, const std::string &prefix, const std::string &suffix,
                const std::string &self) {
    Line("#line " + std::to_string(text.loc.line) + " " + Quote(text.loc.file));
    Raw(prefix + text.text + suffix);
    if (out_.back() != '\n') Raw("\n");
    // The directive sits on line lines_ + 1 and names the line after it.
    Line("#line " + std::to_string(lines_ + 2) + " " + Quote(self));
  }
  // Writes `head(args...)tail`, one argument per line when too long.
  void Call(const std::string &indent, const std::string &head,
            const std::vector<std::string> &args, const std::string &tail) {
    std::string joined;
    for (const std::string &a : args) joined += (joined.empty() ? "" : ", ") + a;
    std::string one = indent + head + "(" + joined + ")" + tail;
    if (one.size() <= kMaxLine || args.size() < 2) {
      Line(one);
      return;
    }
    Line(indent + head + "(");
    for (std::size_t i = 0; i < args.size(); ++i)
      Line(indent + "    " + args[i] + (i + 1 < args.size() ? "," : ")" + tail));
  }
  std::string Take() { return std::move(out_); }

  static std::string Quote(const std::string &s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  }

 private:
  std::string out_;
  int lines_ = 0;
};

// Text safe inside a C comment.
std::string CommentSafe(std::string s) {
  for (std::size_t at; (at = s.find("*/")) != std::string::npos;) s.replace(at, 2, "* /");
  return s;
}

// Writes `text` as comment lines of at most kMaxLine columns, breaking
// after ", " (signatures are long).
void WrapComment(Writer &w, const std::string &text) {
  std::string line = " * ";
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t comma = text.find(", ", start);
    std::size_t end = comma == std::string::npos ? text.size() : comma + 2;
    std::string piece = text.substr(start, end - start);
    if (line.size() + piece.size() > kMaxLine && line.size() > 7) {
      while (line.back() == ' ') line.pop_back();
      w.Line(line);
      line = " *     ";
    }
    line += piece;
    start = end;
  }
  w.Line(line);
}

bool IsScalar(const Param &p) { return p.dims.empty() && !p.pointer; }

// How invoke passes parameter `i` to the routine (see ninf_stub.h for what
// args[i] points to). Fortran takes everything by reference.
std::string ArgExpr(const Param &p, std::size_t i, bool fortran) {
  std::string slot = "args[" + std::to_string(i) + "]";
  if (p.type == Type::kString) return "(char *)" + slot;
  std::string cast = std::string("(") + CType(p.type) + " *)" + slot;
  return IsScalar(p) && !fortran ? "*" + cast : cast;
}

// The declaration of parameter `p` under `name` in a C prototype or local.
std::string Declaration(const Param &p, const std::string &name, bool fortran) {
  if (p.type == Type::kString) return "char *" + name;
  bool by_value = IsScalar(p) && !fortran;
  return std::string(CType(p.type)) + (by_value ? " " : " *") + name;
}

void WritePrototype(Writer &w, const Define &d) {
  bool fortran = IsFortran(d);
  std::vector<std::string> decls, hidden;
  std::vector<std::string> used;
  for (const CallArg &arg : d.call_args) {
    if (arg.name == kCommArg) {
      decls.push_back(fortran ? "MPI_Fint *comm" : "MPI_Comm comm");
      continue;
    }
    const Param &p = d.params[static_cast<std::size_t>(FindParam(d, arg.name))];
    // A parameter passed twice needs a second name in the prototype.
    int seen = static_cast<int>(std::count(used.begin(), used.end(), p.name));
    used.push_back(p.name);
    std::string name = seen ? p.name + "_" + std::to_string(seen + 1) : p.name;
    decls.push_back(Declaration(p, name, fortran));
    // gfortran passes the length of each CHARACTER argument after the others.
    if (fortran && p.type == Type::kString) hidden.push_back("size_t " + name + "_len");
  }
  decls.insert(decls.end(), hidden.begin(), hidden.end());
  if (decls.empty()) decls.push_back("void");
  w.Line(fortran ? "/* The Fortran routine this executable serves (arguments by reference). */"
                 : "/* The C routine this executable serves. */");
  w.Call("", "void " + (fortran ? FortranSymbol(d.callee) : d.callee), decls, ";");
  w.Line();
}

void WriteCallsInvoke(Writer &w, const Define &d) {
  bool fortran = IsFortran(d);
  std::vector<std::string> args, hidden;
  bool comm = false;
  for (const CallArg &arg : d.call_args) {
    if (arg.name == kCommArg) {  // the routine's own communicator (ninf_stub_mpi.h)
      args.push_back(fortran ? "&ninf_comm" : "ninf_stub_mpi_comm()");
      comm = true;
      continue;
    }
    std::size_t i = static_cast<std::size_t>(FindParam(d, arg.name));
    const Param &p = d.params[i];
    args.push_back(ArgExpr(p, i, fortran));
    if (fortran && p.type == Type::kString) hidden.push_back("strlen(" + ArgExpr(p, i, true) + ")");
  }
  args.insert(args.end(), hidden.begin(), hidden.end());
  if (d.call_args.empty() || (comm && d.call_args.size() == 1)) w.Line("  (void)args;");
  if (comm && fortran) w.Line("  MPI_Fint ninf_comm = MPI_Comm_c2f(ninf_stub_mpi_comm());");
  w.Call("  ", fortran ? FortranSymbol(d.callee) : d.callee, args, ";");
}

void WriteBodyInvoke(Writer &w, const Define &d, const std::string &self) {
  std::string unused;
  for (std::size_t i = 0; i < d.params.size(); ++i) {
    const Param &p = d.params[i];
    w.Line("  " + Declaration(p, p.name, false) + " = " + ArgExpr(p, i, false) + ";");
    unused += (unused.empty() ? "  " : " ") + ("(void)" + p.name + ";");
  }
  // The body need not use every parameter; keep -Wunused quiet.
  w.Line(d.params.empty() ? "  (void)args;" : unused);
  w.UserCode(d.code, "{", "}", self);
}

void WriteInterfaceBytes(Writer &w, const wire::FunctionInterface &iface) {
  std::string bytes = iface.SerializeAsString();
  w.Line("/* This executable's ninf.wire.FunctionInterface, serialized. */");
  w.Line("static const unsigned char ninf_interface[] = {");
  for (std::size_t i = 0; i < bytes.size(); i += 12) {
    std::string line = " ";
    for (std::size_t j = i; j < bytes.size() && j < i + 12; ++j) {
      char hex[8];
      std::snprintf(hex, sizeof hex, " 0x%02x,", static_cast<unsigned char>(bytes[j]));
      line += hex;
    }
    w.Line(line);
  }
  w.Line("};");
}

}  // namespace

const char *CType(Type type) { return InfoOf(type).c_type; }

std::string FortranSymbol(const std::string &name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s + "_";
}

std::string GenerateStub(const IdlFile &file, const Define &d, const wire::FunctionInterface &iface,
                         const std::string &stub_path) {
  Writer w;
  w.Line("/*");
  w.Line(" * " + CommentSafe(d.name) + "_stub.c - generated by ninf-gen from " +
         CommentSafe(file.path) + "; do not edit.");
  w.Line(" *");
  WrapComment(w, CommentSafe(Signature(iface) + " in module " + file.module));
  w.Line(" */");
  for (const RawText &g : file.globals) w.UserCode(g, "", "", stub_path);
  w.Line("#include \"ninf_stub.h\"");
  // Backend "MPI": the runtime's parallel main and the routine's communicator.
  if (IsMpi(d)) w.Line("#include \"ninf_stub_mpi.h\"");
  bool needs_strlen = false;
  if (IsFortran(d))
    for (const CallArg &arg : d.call_args)
      needs_strlen |=
          arg.name != kCommArg &&
          d.params[static_cast<std::size_t>(FindParam(d, arg.name))].type == Type::kString;
  if (needs_strlen) w.Line("#include <string.h>");
  w.Line();
  if (d.body == Body::kCalls) WritePrototype(w, d);
  w.Line("/* Runs the routine on the argument vector described in ninf_stub.h. */");
  w.Line("static void ninf_invoke(void **args) {");
  if (d.body == Body::kCalls)
    WriteCallsInvoke(w, d);
  else
    WriteBodyInvoke(w, d, stub_path);
  w.Line("}");
  w.Line();
  WriteInterfaceBytes(w, iface);
  w.Line();
  w.Line("int main(int argc, char **argv) {");
  const std::string main_fn = IsMpi(d) ? "ninf_stub_mpi_main" : "ninf_stub_main";
  w.Line("  return " + main_fn +
         "(argc, argv, ninf_interface, sizeof ninf_interface, ninf_invoke);");
  w.Line("}");
  return w.Take();
}

}  // namespace ninf::idl
