// The client's edges that need no server: environment variables validated
// like settings (meson runs this with NINF_TIMEOUT set to garbage),
// Ninf_parse_arg refusing bad values, and configuration files whose errors
// read as configuration errors.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/grpc.h"
#include "client/ninf.h"

TEST_CASE("client_env_bad_timeout_is_named", "[client]") {
  REQUIRE(std::string(std::getenv("NINF_TIMEOUT")) == "soon");  // set by meson.build
  CHECK(Ninf_call("ninf://127.0.0.1:1/null") == -1);
  CHECK(Ninf_get_error() == NINF_ERR_CONFIG);
  CHECK(std::string(Ninf_get_error_detail()).find("NINF_TIMEOUT='soon'") != std::string::npos);
  // grpc_initialize without a file takes the environment too, and says why.
  CHECK(grpc_initialize(nullptr) == GRPC_OTHER_ERROR_CODE);
  CHECK(std::string(Ninf_get_error_detail()).find("NINF_TIMEOUT") != std::string::npos);
}

TEST_CASE("client_parse_arg_refuses_bad_values", "[client]") {
  char prog[] = "prog", port[] = "-port", bad[] = "abc", big[] = "70000", rest[] = "x";
  char *argv1[] = {prog, port, bad, rest, nullptr};
  CHECK(Ninf_parse_arg(4, argv1) == -1);
  CHECK(Ninf_get_error() == NINF_ERR_INVALID_ARGUMENT);
  CHECK(std::string(Ninf_get_error_detail()).find("'abc'") != std::string::npos);
  CHECK(argv1[1] == port);  // argv untouched
  char *argv2[] = {prog, port, big, rest, nullptr};
  CHECK(Ninf_parse_arg(4, argv2) == -1);
  char server[] = "-server", badserver[] = "host:0";
  char *argv3[] = {prog, server, badserver, nullptr};
  CHECK(Ninf_parse_arg(3, argv3) == -1);
  char good[] = "4000";
  char *argv4[] = {prog, port, good, rest, nullptr};
  REQUIRE(Ninf_parse_arg(4, argv4) == 2);
  CHECK(argv4[1] == rest);
}

TEST_CASE("client_config_errors_are_configuration_errors", "[client]") {
  char path[] = "/tmp/ninf-client-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  const std::string text = "connect_timeout = \"two\"\n";
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  CHECK(grpc_initialize(path) == GRPC_CONFIGFILE_ERROR);
  CHECK(Ninf_get_error() == NINF_ERR_CONFIG);
  CHECK(std::string(Ninf_error_string(Ninf_get_error())) == "configuration error");
  std::remove(path);
}
