// ninf-linkdelay: the added delay of an emulated wide-area link, as a TCP
// relay (relay.h). ninf-sites starts one per forwarded port in a site; it
// runs until it is killed. Thin: options, the listener, the loop.
#include <uv.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
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

// tc's spelling of a rate ("20mbit", "28990kbit", "1gbit", "500000bit") in
// bytes per second; false for anything else or zero.
bool ParseRate(const std::string &text, uint64_t *bytes_per_s) {
  std::size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  const std::string unit = text.substr(digits);
  const double scale = unit == "bit"    ? 1.0
                       : unit == "kbit" ? 1e3
                       : unit == "mbit" ? 1e6
                       : unit == "gbit" ? 1e9
                                        : 0.0;
  if (digits == 0 || scale == 0.0) return false;
  const double bits = std::strtod(text.substr(0, digits).c_str(), nullptr) * scale;
  if (!(bits >= 8.0 && bits <= 1e12)) return false;
  *bytes_per_s = static_cast<uint64_t>(bits / 8.0);
  return true;
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
      "emulated wide-area link (the round trip grows by twice that); with --rate, each "
      "direction is also a link of that rate that the connections share in turn. Runs until "
      "killed.",
      "ninf-linkdelay");
  std::string listen, to, ready_file, rate;
  ninf::sites::RelayConfig config;
  app.add_option("--listen", listen, "numeric address to accept on")
      ->type_name("HOST:PORT")
      ->required();
  app.add_option("--to", to, "numeric address to relay to")->type_name("HOST:PORT")->required();
  app.add_option("--delay-ms", config.delay_ms, "one-way delay, milliseconds")
      ->check(CLI::Range(0, 10000));
  app.add_option("--rate", rate,
                 "pace each direction at this rate (tc's spelling: 20mbit), shared fairly by "
                 "every connection (round robin); default: no pacing here, tc shapes the link")
      ->type_name("RATE");
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

  if (!rate.empty() && !ParseRate(rate, &config.rate_bytes_per_s)) {
    std::fprintf(stderr, "ninf-linkdelay: --rate '%s' is not a rate like 20mbit, 500kbit, 1gbit\n",
                 rate.c_str());
    return 2;
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
