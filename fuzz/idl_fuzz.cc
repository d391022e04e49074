// ninf-gen's front end on arbitrary text: the lexer on its own, then the
// whole in-memory pipeline (CompileText: parser, checks, interface and stub
// generation; no cpp, nothing written to disk), and what becomes of each
// generated interface downstream.
//
// Properties: the lexer ends; a failed compilation says why; every
// interface ninf-gen produces is one that ninfd loads (its .interface text
// parses back into the same message and passes ValidateInterface) and that
// a client can decode from the FRAME_INTERFACE reply ninfd sends.
//
// Input: IDL text as cpp would hand it over (line markers included).
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "idl/diagnostics.h"
#include "idl/driver.h"
#include "idl/lexer.h"
#include "idl/process.h"
#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/status.h"

namespace {

namespace wire = ninf::wire;

void CheckInterface(const ninf::idl::Output &o) {
  ninf::Status valid = ninf::ValidateInterface(o.iface);
  FUZZ_CHECK(valid.ok(),
             ("ninf-gen produced an interface that ninfd refuses: " + valid.message()).c_str());
  FUZZ_CHECK(o.iface.name() == o.name, "interface named differently from its Define");

  // ninfd's registry reads NAME.interface with TextFormat (server/registry.cc).
  wire::FunctionInterface loaded;
  google::protobuf::TextFormat::Parser parser;
  FUZZ_CHECK(parser.ParseFromString(o.interface_text, &loaded),
             "the generated .interface text does not parse");
  FUZZ_CHECK(loaded.SerializeAsString() == o.iface.SerializeAsString(),
             "the .interface text describes another interface");

  // ninfd sends it in FRAME_INTERFACE; the client parses and validates it.
  wire::InterfaceReply reply;
  *reply.mutable_iface() = loaded;
  std::string bytes = reply.SerializeAsString();
  wire::InterfaceReply received;
  FUZZ_CHECK(received.ParseFromString(bytes),
             "a client cannot parse the FRAME_INTERFACE of this function (invalid UTF-8 in a "
             "string field?)");
  FUZZ_CHECK(ninf::ValidateInterface(received.iface()).ok(), "the client refuses the interface");
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);

  {
    ninf::idl::Diagnostics diag;
    ninf::idl::Lexer lexer(text, "fuzz.idl", &diag);
    std::size_t tokens = 0;
    while (lexer.Next().kind != ninf::idl::TokenKind::kEnd)
      FUZZ_CHECK(++tokens <= size, "the lexer does not end");
  }

  ninf::idl::Diagnostics diag;
  ninf::idl::Compilation comp;
  bool ok = ninf::idl::CompileText(text, "fuzz.idl", "out", &diag, &comp);
  (void)diag.Format();
  FUZZ_CHECK(ok == diag.ok(), "success and diagnostics disagree");
  if (!ok) return 0;
  FUZZ_CHECK(comp.outputs.size() == comp.file.defines.size(), "one output per Define");
  for (const ninf::idl::Output &o : comp.outputs) CheckInterface(o);
  // `ninf-gen --install` splits these into compiler arguments.
  for (const std::string &flags : comp.file.compile_options) (void)ninf::idl::SplitWords(flags);
  for (const std::string &flags : comp.file.libraries) (void)ninf::idl::SplitWords(flags);
  return 0;
}
