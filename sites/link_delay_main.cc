// ninf-linkdelay: the added delay of an emulated wide-area link, as a TCP
// relay (relay.h). ninf-sites starts one per forwarded port in a site; it
// runs until it is killed. Thin: options, the listener, the loop.
#include <uv.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <string>

#include "protocol/address.h"
#include "sites/relay.h"

namespace {

// Resolves a numeric "host:port" (no DNS: sites have none) into `out`.
bool ToSockaddr(const std::string &text, sockaddr_storage *out, std::string *error) {
  ninf::HostPort hp;
  if (ninf::Status st = ninf::ParseHostPort(text, ninf::HostPort{}, &hp); !st.ok()) {
    *error = st.message();
    return false;
  }
  auto *v4 = reinterpret_cast<sockaddr_in *>(out);
  auto *v6 = reinterpret_cast<sockaddr_in6 *>(out);
  if (uv_ip4_addr(hp.host.c_str(), hp.port, v4) == 0 ||
      uv_ip6_addr(hp.host.c_str(), hp.port, v6) == 0)
    return true;
  *error = "'" + hp.host + "' is not a numeric IPv4 or IPv6 address";
  return false;
}

// Written once listening, by rename, so that a reader never sees half of it.
bool WriteReadyFile(const std::string &path) {
  const std::string tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "ready\n");
  return std::fclose(f) == 0 && std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app(
      "ninf-linkdelay: relays every TCP connection accepted on --listen to --to, holding "
      "the bytes of each direction for --delay-ms milliseconds: the one-way delay of an "
      "emulated wide-area link (the round trip grows by twice that). Runs until killed.",
      "ninf-linkdelay");
  std::string listen, to, ready_file;
  ninf::sites::RelayConfig config;
  app.add_option("--listen", listen, "numeric address to accept on")
      ->type_name("HOST:PORT")
      ->required();
  app.add_option("--to", to, "numeric address to relay to")->type_name("HOST:PORT")->required();
  app.add_option("--delay-ms", config.delay_ms, "one-way delay, milliseconds")
      ->check(CLI::Range(0, 10000));
  app.add_option("--ready-file", ready_file, "written once accepting");
  CLI11_PARSE(app, argc, argv);
  // A client that goes away while its server still talks (a call given up
  // on, a heartbeat on its way) is written to after its reset: that write
  // must fail (and close the pair), not raise SIGPIPE and kill every other
  // connection of the link. libuv leaves SIGPIPE to the program.
  if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    std::perror("ninf-linkdelay: signal(SIGPIPE)");
    return 1;
  }

  sockaddr_storage listen_addr{};
  std::string error;
  if (!ToSockaddr(listen, &listen_addr, &error) || !ToSockaddr(to, &config.target, &error)) {
    std::fprintf(stderr, "ninf-linkdelay: %s\n", error.c_str());
    return 2;
  }
  uv_loop_t *loop = uv_default_loop();
  uv_tcp_t listener;
  uv_tcp_init(loop, &listener);
  int rc = uv_tcp_bind(&listener, reinterpret_cast<const sockaddr *>(&listen_addr), 0);
  if (rc == 0) rc = ninf::sites::StartRelaying(&listener, &config);
  if (rc != 0) {
    std::fprintf(stderr, "ninf-linkdelay: cannot listen on %s: %s\n", listen.c_str(),
                 uv_strerror(rc));
    return 1;
  }
  if (!ready_file.empty() && !WriteReadyFile(ready_file)) {
    std::perror(("ninf-linkdelay: " + ready_file).c_str());
    return 1;
  }
  return uv_run(loop, UV_RUN_DEFAULT);
}
