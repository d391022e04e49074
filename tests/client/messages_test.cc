// The C client's messages for the mistakes its users make (issue 31): a
// character where the IDL says `IN string`, a LAPACK workspace query, a
// NULL string, and a server that is not there. Each message is quoted
// exactly, against a real ninfd serving tests/client/msgs (a dsyev-shaped
// routine), or against a loopback port where nothing listens; after each
// refusal a good call must still succeed.
//
// Each TEST_CASE is one Meson test (tests/client/meson.build): some set the
// default server, which then stays set for the process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "client/grpc.h"
#include "client/ninf.h"
#include "tests/server/daemon_fixture.h"

namespace {

// A loopback port where nothing listens, held for the test's life: a TCP
// socket that is bound but not listening makes the kernel answer every
// connection with a reset (ECONNREFUSED), and no other process can take
// the port meanwhile.
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr *>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  RefusingPort(const RefusingPort &) = delete;
  RefusingPort &operator=(const RefusingPort &) = delete;

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string Detail() { return Ninf_get_error_detail() ? Ninf_get_error_detail() : ""; }

// The advice after a refused connection to the default server.
std::string DefaultAdvice(const std::string &address, const std::string &from) {
  return address + ": Connection refused; no ninfd at " + address + ", the default server (from " +
         from +
         "): start ninfd there, or set NINF_SERVER=host:port to a running one (or pass -server "
         "host:port to a program that calls Ninf_parse_arg, or set default_server in the file "
         "given to grpc_initialize)";
}

struct Msgs {
  ninf::test::Daemon d{std::vector<std::string>{"--registry", MSGS_REGISTRY_DIR}};
  std::string Name() const { return "ninf://" + d.address() + "/wsquery"; }

  // The good call: jobz "V" doubles a, with a workspace of n.
  void GoodCall() {
    double a[3] = {1, 2, 3};
    int info = -1;
    REQUIRE(Ninf_call(Name().c_str(), "V", 3, a, nullptr, 3, &info) == 0);
    CHECK(info == 0);
    CHECK(a[2] == 6.0);
  }
};

}  // namespace

// Ninf_call("dsyev", 'V', ...) where the IDL says `IN string jobz`: the
// character arrives as a pointer of value 86, which strlen would crash on.
TEST_CASE("client_messages_character_for_a_string", "[client_messages]") {
  Msgs m;
  double a[3] = {1, 2, 3};
  int info = 7;
  CHECK(Ninf_call(m.Name().c_str(), 'V', 3, a, nullptr, 3, &info) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK_THAT(Detail(),
             Catch::StartsWith("argument 1 of wsquery ('jobz') is an IN string, but the value "
                               "passed is 86 (the character 'V'), not a pointer to text: pass the "
                               "string \"V\" (double quotes), not the character 'V' (single "
                               "quotes). The call is wsquery(IN string jobz, IN int n"));
  CHECK(a[0] == 1.0);  // nothing was sent, nothing came back
  CHECK(info == 7);

  // A small integer that is no printable character: the general fix.
  CHECK(Ninf_call(m.Name().c_str(), 1, 3, a, nullptr, 3, &info) != 0);
  CHECK_THAT(Detail(),
             Catch::StartsWith("argument 1 of wsquery ('jobz') is an IN string, but the value "
                               "passed is 1, not a pointer to text: pass a string in double quotes "
                               "(\"N\"), not a character or an integer. The call is wsquery("));

  // A negative integer (a pointer-wide -1): above every user-space address.
  // -1 could also be a character, which the message says.
  CHECK(Ninf_call(m.Name().c_str(), -1L, 3, a, nullptr, 3, &info) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK_THAT(Detail(), Catch::StartsWith("argument 1 of wsquery ('jobz') is an IN string, but the "
                                         "value passed is -1 (a negative integer, or a character "
                                         "outside ASCII), not a pointer"));

  // A character outside ASCII, promoted to a negative int.
  CHECK(Ninf_call(m.Name().c_str(), static_cast<char>(-23), 3, a, nullptr, 3, &info) != 0);
  CHECK_THAT(Detail(), Catch::StartsWith("argument 1 of wsquery ('jobz') is an IN string, but the "
                                         "value passed is -23 (a negative integer, or a character "
                                         "outside ASCII)"));
  CHECK(info == 7);

  // NULL, by position too.
  CHECK(Ninf_call(m.Name().c_str(), static_cast<const char *>(nullptr), 3, a, nullptr, 3, &info) !=
        0);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  CHECK_THAT(Detail(), Catch::StartsWith("argument 1 of wsquery ('jobz') is a NULL string: pass a "
                                         "string, such as \"N\". The call is wsquery("));
  m.GoodCall();
}

// An integer where an array goes: before, the call crashed the program in
// copying the array (SIGSEGV in CopyArrays, issue 45's dgemm with integer
// literals for its double scalars, whose integers land on the pointers).
TEST_CASE("client_messages_integer_for_an_array", "[client_messages]") {
  Msgs m;
  int info = 7;
  CHECK(Ninf_call(m.Name().c_str(), "V", 3, 5, nullptr, 3, &info) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK_THAT(Detail(),
             Catch::StartsWith("argument 3 of wsquery ('a') is an array, but the value passed is "
                               "5, not a pointer to one: was an argument before it of another "
                               "type (an integer such as 1 where a double goes: write 1.0, C "
                               "varargs do not convert it), or one left out? The call is "
                               "wsquery(IN string jobz, IN int n"));
  // A negative integer, sign-extended as compilers pass it.
  CHECK(Ninf_call(m.Name().c_str(), "V", 3, -2L, nullptr, 3, &info) != 0);
  CHECK_THAT(Detail(), Catch::StartsWith("argument 3 of wsquery ('a') is an array, but the value "
                                         "passed is -2, not a pointer to one"));
  CHECK(info == 7);  // nothing was sent
  m.GoodCall();
}

// LAPACK's workspace query (lwork = -1): the real reason and what to pass.
TEST_CASE("client_messages_workspace_query", "[client_messages]") {
  Msgs m;
  double a[3] = {1, 2, 3};
  int info = 7;
  CHECK(Ninf_call(m.Name().c_str(), "V", 3, a, nullptr, -1, &info) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_ARGUMENT_MISMATCH);
  CHECK_THAT(Detail(),
             Catch::StartsWith(
                 "argument 4 of wsquery ('work') would have -1 elements: argument 5 ('lwork') = "
                 "-1 asks for a workspace query, which cannot work remotely (the routine would "
                 "write the size it wants into 'work', which never comes back). Pass the "
                 "workspace size itself as 'lwork': at least the minimum the routine documents, "
                 "more for speed; the server allocates 'work', so pass NULL for it from C, any "
                 "array from Fortran, None from Python. The call is wsquery("));
  CHECK(info == 7);
  // Another negative size is still the left-out-argument message.
  CHECK(Ninf_call(m.Name().c_str(), "V", 3, a, nullptr, -7, &info) != 0);
  CHECK_THAT(Detail(), Catch::StartsWith("argument 4 of wsquery ('work') would have -7 elements "
                                         "in a dimension: is an argument left out"));
  // n = -1 sizes an array that is no workspace: not a query.
  CHECK(Ninf_call(m.Name().c_str(), "V", -1, a, nullptr, 3, &info) != 0);
  CHECK_THAT(Detail(), Catch::StartsWith("argument 3 of wsquery ('a') would have -1 elements in "
                                         "a dimension: is an argument left out"));
  m.GoodCall();
}

// NINF_SERVER names a port where no ninfd listens.
TEST_CASE("client_messages_refused_ninf_server", "[client_messages]") {
  RefusingPort port;
  REQUIRE(::setenv("NINF_SERVER", port.address().c_str(), 1) == 0);
  double a[3] = {1, 2, 3};
  int info = 0;
  CHECK(Ninf_call("wsquery", "V", 3, a, nullptr, 3, &info) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_CONNECT);
  CHECK_THAT(Detail(),
             Catch::Contains(DefaultAdvice(port.address(), "NINF_SERVER=" + port.address())));
}

// -server on the command line (Ninf_parse_arg) wins over NINF_SERVER, and
// the message says so.
TEST_CASE("client_messages_refused_command_line", "[client_messages]") {
  RefusingPort port;
  REQUIRE(::setenv("NINF_SERVER", "127.0.0.1:1", 1) == 0);
  std::string server = port.address();
  std::vector<char *> argv = {const_cast<char *>("prog"), const_cast<char *>("-server"),
                              server.data(), nullptr};
  REQUIRE(Ninf_parse_arg(3, argv.data()) == 1);
  double a[3] = {1, 2, 3};
  int info = 0;
  CHECK(Ninf_call("wsquery", "V", 3, a, nullptr, 3, &info) != 0);
  CHECK_THAT(Detail(), Catch::Contains(DefaultAdvice(
                           port.address(), "-server " + port.address() + " on the command line")));
}

// The GridRPC client's default_server from its config file.
TEST_CASE("client_messages_refused_grpc_config", "[client_messages]") {
  RefusingPort port;
  ::unsetenv("NINF_SERVER");
  ninf::test::TempDir dir;
  dir.WriteFile("client.toml", "default_server = \"" + port.address() + "\"\n");
  std::string config = dir.Join("client.toml");
  REQUIRE(grpc_initialize(config.data()) == GRPC_NO_ERROR);  // GFD.52 takes char *
  grpc_function_handle_t h;
  char function[] = "wsquery";
  CHECK(grpc_function_handle_default(&h, function) != GRPC_NO_ERROR);
  CHECK_THAT(Detail(),
             Catch::Contains(DefaultAdvice(port.address(), "default_server in " + config)));
  CHECK(grpc_finalize() == GRPC_NO_ERROR);
}

// A server named in the call is not the default: NINF_SERVER does not
// apply, and the message says what does.
TEST_CASE("client_messages_refused_named_server", "[client_messages]") {
  RefusingPort port;
  REQUIRE(::setenv("NINF_SERVER", "127.0.0.1:1", 1) == 0);
  double a[3] = {1, 2, 3};
  int info = 0;
  const std::string name = "ninf://" + port.address() + "/wsquery";
  CHECK(Ninf_call(name.c_str(), "V", 3, a, nullptr, 3, &info) != 0);
  CHECK(Ninf_get_error() == NINF_ERR_CONNECT);
  CHECK_THAT(Detail(), Catch::Contains(port.address() + ": Connection refused; no ninfd at " +
                                       port.address() +
                                       ", the server named by the call (ninf://host:port/name), "
                                       "its handle or the metaserver: start ninfd there or name "
                                       "another one (NINF_SERVER applies only to bare function "
                                       "names)"));
}
