// What a client that cannot reach its server is told (UnreachableAdvice,
// client/server_address.h): the pure function for every origin of the
// default server, including the ones the black-box tests cannot provoke
// safely (the built-in localhost:3000 may be someone's real ninfd), and the
// stateful one that decides whether an address is the default.
// client/server_address.cc is compiled in: libninf hides its symbols.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "client/server_address.h"

using ninf::client::ServerAddress;
using ninf::client::ServerOrigin;
using ninf::client::UnreachableAdvice;

namespace {

const std::string kChoose =
    "set NINF_SERVER=host:port to a running one (or pass -server host:port to a program that "
    "calls Ninf_parse_arg, or set default_server in the file given to grpc_initialize)";

}  // namespace

TEST_CASE("client_advice_for_each_origin", "[client_advice]") {
  const ServerAddress local{"localhost", 3000};
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kBuiltIn, "", "") ==
        "; no ninfd at localhost:3000, the default server (from the built-in default, as "
        "NINF_SERVER is not set): start ninfd there, or " +
            kChoose);
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kEnvironment, "", "localhost") ==
        "; no ninfd at localhost:3000, the default server (from NINF_SERVER=localhost): start "
        "ninfd there, or " +
            kChoose);
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kSetServer, "", "") ==
        "; no ninfd at localhost:3000, the default server (from the server set by "
        "Ninf_set_server): start ninfd there, or " +
            kChoose);
  // A binding's own way of setting it (Ninf_binding_set_server's origin).
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kSetServer, "ninf.set_server()", "") ==
        "; no ninfd at localhost:3000, the default server (from ninf.set_server()): start "
        "ninfd there, or " +
            kChoose);
  // ... and its own words for naming another one.
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kSetServer, "ninf.set_server()", "",
                          "call ninf.set_server(...)") ==
        "; no ninfd at localhost:3000, the default server (from ninf.set_server()): start "
        "ninfd there, or call ninf.set_server(...)");
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kCommandLine, "-port 3000", "") ==
        "; no ninfd at localhost:3000, the default server (from -port 3000 on the command "
        "line): start ninfd there, or " +
            kChoose);
  CHECK(UnreachableAdvice(local, true, ServerOrigin::kConfigFile, "", "") ==
        "; no ninfd at localhost:3000, the default server (from default_server in the config "
        "file): start ninfd there, or " +
            kChoose);
  ServerAddress socket;
  socket.unix_path = "/run/ninfd.sock";
  CHECK(UnreachableAdvice(socket, false, ServerOrigin::kBuiltIn, "", "") ==
        "; no ninfd at unix:/run/ninfd.sock, the server named by the call "
        "(ninf://host:port/name), its handle or the metaserver: start ninfd there or name "
        "another one (NINF_SERVER applies only to bare function names)");
}

// The default as the process has it: NINF_SERVER until something sets one,
// and only the default's own address gets the advice about it.
TEST_CASE("client_advice_follows_the_default", "[client_advice]") {
  ::unsetenv("NINF_SERVER");
  CHECK_THAT(UnreachableAdvice(ServerAddress{"localhost", 3000}),
             Catch::Contains("(from the built-in default, as NINF_SERVER is not set)"));
  ::setenv("NINF_SERVER", "127.0.0.1:4000", 1);
  CHECK_THAT(UnreachableAdvice(ServerAddress{"127.0.0.1", 4000}),
             Catch::Contains("(from NINF_SERVER=127.0.0.1:4000)"));
  CHECK_THAT(UnreachableAdvice(ServerAddress{"localhost", 3000}),
             Catch::Contains("the server named by the call"));
  ninf::client::SetDefaultServer(ServerAddress{"127.0.0.1", 4001}, ServerOrigin::kSetServer);
  CHECK_THAT(UnreachableAdvice(ServerAddress{"127.0.0.1", 4001}),
             Catch::Contains("(from the server set by Ninf_set_server)"));
  CHECK_THAT(UnreachableAdvice(ServerAddress{"127.0.0.1", 4000}),
             Catch::Contains("the server named by the call"));
}
