#include "stubs/runtime/interface_text.h"

#include <cstdio>

namespace ninf::stub {
namespace {

// TextFormat's rules for the field kinds ninf.proto's FunctionInterface
// uses: proto3 scalars only when not zero/empty, repeated fields element by
// element, a singular message only when set, nested messages indented by two
// spaces, enum values by name (by number when unknown). Unknown fields are
// not printed: the embedded interface comes from ninf-gen, built from this
// same ninf.proto.
class Printer {
 public:
  std::string Take() { return std::move(out_); }

  void String(const char *field, const std::string &value) {
    if (value.empty()) return;
    Indent();
    out_ += field;
    out_ += ": \"";
    Escape(value);
    out_ += "\"\n";
  }
  void Bool(const char *field, bool value) {
    if (!value) return;
    Indent();
    out_ += field;
    out_ += ": true\n";
  }
  void Int(const char *field, int64_t value) {
    if (value == 0) return;
    Indent();
    out_ += field;
    out_ += ": ";
    out_ += std::to_string(value);
    out_ += '\n';
  }
  void Enum(const char *field, int value, const std::string &name) {
    if (value == 0) return;
    Indent();
    out_ += field;
    out_ += ": ";
    out_ += name.empty() ? std::to_string(value) : name;
    out_ += '\n';
  }
  void Open(const char *field) {
    Indent();
    out_ += field;
    out_ += " {\n";
    ++depth_;
  }
  void Close() {
    --depth_;
    Indent();
    out_ += "}\n";
  }

 private:
  void Indent() { out_.append(2 * depth_, ' '); }

  // google::protobuf::CEscape: the C escapes for \n \r \t " ' and \, and
  // three octal digits for any other byte outside printable ASCII (UTF-8
  // included).
  void Escape(const std::string &s) {
    for (unsigned char c : s) {
      switch (c) {
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '"':
          out_ += "\\\"";
          break;
        case '\'':
          out_ += "\\'";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        default:
          if (c < 0x20 || c >= 0x7f) {
            char octal[8];
            std::snprintf(octal, sizeof octal, "\\%03o", c);
            out_ += octal;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
  }

  std::string out_;
  int depth_ = 0;
};

void PrintExpr(Printer &p, const char *field, const wire::Expr &expr) {
  p.Open(field);
  for (const wire::ExprNode &node : expr.nodes()) {
    p.Open("nodes");
    p.Enum("op", node.op(), wire::ExprNode::Op_Name(node.op()));
    p.Int("value", node.value());
    p.Close();
  }
  p.Close();
}

}  // namespace

std::string InterfaceText(const wire::FunctionInterface &iface) {
  Printer p;
  p.String("name", iface.name());
  p.String("module", iface.module());
  p.String("description", iface.description());
  for (const wire::Param &param : iface.params()) {
    p.Open("params");
    p.String("name", param.name());
    p.Enum("mode", param.mode(), wire::Mode_Name(param.mode()));
    p.Enum("type", param.type(), wire::Type_Name(param.type()));
    for (const wire::Expr &dim : param.dims()) PrintExpr(p, "dims", dim);
    p.Bool("pointer", param.pointer());
    p.Close();
  }
  if (iface.has_calc_order()) PrintExpr(p, "calc_order", iface.calc_order());
  p.Enum("language", iface.language(), wire::FunctionInterface::Language_Name(iface.language()));
  p.String("backend", iface.backend());
  p.Bool("no_reuse", iface.no_reuse());
  p.String("distribute", iface.distribute());
  p.Bool("redirect", iface.redirect());
  p.Bool("fetch_tls", iface.fetch_tls());
  return p.Take();
}

}  // namespace ninf::stub
