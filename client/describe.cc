// What a server serves, for language bindings (ninf_binding.h): the names
// of its functions (FRAME_LIST) and one function's interface
// (FRAME_QUERY_INTERFACE, through the interface cache), as JSON text. A
// binding with a JSON reader (Python's ninf.functions and ninf.describe)
// then needs no protobuf of its own, and the interface it shows is exactly
// the one its calls are checked against.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/c_boundary.h"
#include "client/connect.h"
#include "client/interfaces.h"
#include "client/last_error.h"
#include "client/ninf_binding.h"
#include "client/server_address.h"
#include "protocol/ask.h"
#include "protocol/layout.h"

namespace ninf::client {
namespace {

// A JSON string literal. The interface's texts are valid UTF-8
// (ValidateInterface), so only quotes, backslashes and control characters
// need escapes.
void AppendString(std::string *out, const std::string &s) {
  *out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      *out += esc;
    } else {
      *out += static_cast<char>(c);
    }
  }
  *out += '"';
}

// An expression as its prefix-order nodes, [["MUL", 0], ["PARAM", 0],
// ["CONST", 2]]: the tree as the wire has it, which a binding evaluates (to
// allocate OUT arrays) or prints.
void AppendExpr(std::string *out, const wire::Expr &e) {
  *out += '[';
  for (int i = 0; i < e.nodes_size(); ++i) {
    const wire::ExprNode &n = e.nodes(i);
    if (i) *out += ", ";
    *out += '[';
    AppendString(out, wire::ExprNode_Op_Name(n.op()));
    *out += ", " + std::to_string(n.value()) + "]";
  }
  *out += ']';
}

std::string InterfaceJson(const wire::FunctionInterface &iface) {
  std::string j = "{\"name\": ";
  AppendString(&j, iface.name());
  j += ", \"module\": ";
  AppendString(&j, iface.module());
  j += ", \"description\": ";
  AppendString(&j, iface.description());
  j += ", \"language\": ";
  AppendString(&j, iface.language() == wire::FunctionInterface::LANG_FORTRAN ? "Fortran" : "C");
  j += ", \"backend\": ";
  AppendString(&j, iface.backend());
  j += ", \"signature\": ";
  AppendString(&j, Signature(iface));
  j += ", \"calc_order\": ";
  AppendExpr(&j, iface.calc_order());
  j += ", \"params\": [";
  for (int i = 0; i < iface.params_size(); ++i) {
    const wire::Param &p = iface.params(i);
    const ninf_type_info *t = ninf_type_info_of(p.type());
    if (i) j += ", ";
    j += "{\"name\": ";
    AppendString(&j, p.name());
    j += ", \"mode\": ";
    AppendString(&j, ModeName(p.mode()));
    j += ", \"type\": ";
    AppendString(&j, t ? t->name : "?");
    j += std::string(", \"pointer\": ") + (p.pointer() ? "true" : "false");
    j += ", \"dims\": [";
    for (int d = 0; d < p.dims_size(); ++d) {
      if (d) j += ", ";
      AppendExpr(&j, p.dims(d));
    }
    j += "]}";
  }
  return j + "]}";
}

// `server` as given, or the default server for NULL and "".
Status Target(const char *server, ServerAddress *out) {
  if (!server || !*server) return DefaultServer(out);
  return ParseServerAddress(server, out);
}

// A malloc'ed copy for the caller (Ninf_binding_free).
Status Hand(const std::string &text, char **out) {
  char *copy = static_cast<char *>(std::malloc(text.size() + 1));
  if (!copy) return Status(NINF_ERR_NO_MEMORY, "");
  std::memcpy(copy, text.c_str(), text.size() + 1);
  *out = copy;
  return Status::Ok();
}

Status ListFunctions(const char *server, char **json) {
  ServerAddress target;
  NINF_RETURN_IF_ERROR(Target(server, &target));
  std::unique_ptr<Channel> ch;
  NINF_RETURN_IF_ERROR(ConnectToServer(target, &ch));
  wire::ListReply reply;
  if (Status st = Ask(*ch, wire::ListRequest(), &reply); !st.ok())
    return Status(st.code(), "listing the functions of " + target.Key() + ": " + st.message());
  std::vector<std::string> names(reply.names().begin(), reply.names().end());
  std::sort(names.begin(), names.end());
  std::string j = "[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) j += ", ";
    AppendString(&j, names[i]);
  }
  return Hand(j + "]", json);
}

Status DescribeFunction(const char *server, const char *name, char **json) {
  if (!name || !*name) return Status(NINF_ERR_INVALID_ARGUMENT, "no function name");
  ServerAddress target;
  NINF_RETURN_IF_ERROR(Target(server, &target));
  InterfacePtr iface = CachedInterface(target, name);
  if (!iface) {
    std::unique_ptr<Channel> ch;
    NINF_RETURN_IF_ERROR(ConnectToServer(target, &ch));
    NINF_RETURN_IF_ERROR(GetInterface(target, name, *ch, &iface));
  }
  return Hand(InterfaceJson(*iface), json);
}

}  // namespace
}  // namespace ninf::client

extern "C" {

int Ninf_binding_functions(const char *server, char **json) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!json) return ninf::client::RecordStatus(ninf::Status(NINF_ERR_INVALID_ARGUMENT, "NULL"));
    *json = nullptr;
    return ninf::client::RecordStatus(ninf::client::ListFunctions(server, json));
  });
}

int Ninf_binding_describe(const char *server, const char *name, char **json) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!json) return ninf::client::RecordStatus(ninf::Status(NINF_ERR_INVALID_ARGUMENT, "NULL"));
    *json = nullptr;
    return ninf::client::RecordStatus(ninf::client::DescribeFunction(server, name, json));
  });
}

void Ninf_binding_free(void *p) { std::free(p); }

}  // extern "C"
