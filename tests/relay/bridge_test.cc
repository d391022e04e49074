// One bridge of ninf-relay (relay/bridge.h) between real loopback TCP
// connections, on a loop of its own: bytes cross both ways, a clean close
// ends it with no error, and a peer's reset is named as one (libuv reports
// a socket's POLLERR as "bad file descriptor", which the relay used to log
// for bridges whose calls had succeeded).
#include "relay/bridge.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>

using ninf::daemon::UniqueFd;
using ninf::relay::Bridge;

namespace {

// A connected loopback TCP pair: `outer` is the peer's end (blocking),
// `inner` the end the bridge takes (non-blocking).
struct TcpPair {
  UniqueFd outer, inner;
};

TcpPair Connected() {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(listener.get() >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener.get(), 1) == 0);
  REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr *>(&addr), &len) == 0);
  TcpPair p;
  p.outer.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(::connect(p.outer.get(), reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  p.inner.reset(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
  REQUIRE(p.inner.get() >= 0);
  return p;
}

// Runs the loop until the bridge has called back (or a few seconds pass).
void RunUntil(uv_loop_t *loop, const std::optional<std::string> &why) {
  for (int i = 0; i < 3000 && !why; ++i) uv_run(loop, UV_RUN_NOWAIT), ::usleep(1000);
}

// `text` written at one peer's end, and what reached the other through the
// bridge (the loop run until it has, or a few seconds pass).
std::string Through(uv_loop_t *loop, int from, int to, const std::string &text) {
  REQUIRE(::write(from, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  std::string got;
  for (int i = 0; i < 3000 && got.size() < text.size(); ++i) {
    uv_run(loop, UV_RUN_NOWAIT);
    char buf[64];
    const ssize_t n = ::recv(to, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0)
      got.append(buf, static_cast<std::size_t>(n));
    else
      ::usleep(1000);
  }
  return got;
}

std::string Exchange(TcpPair &client, TcpPair &server, uv_loop_t *loop) {
  return Through(loop, client.outer.get(), server.outer.get(), "ping") + "/" +
         Through(loop, server.outer.get(), client.outer.get(), "pong");
}

}  // namespace

TEST_CASE("relay_bridge_names_a_reset_and_closes_a_clean_end_without_error", "[relay]") {
  for (const bool reset : {false, true}) {
    INFO((reset ? "the client resets" : "both ends close"));
    uv_loop_t loop;
    REQUIRE(uv_loop_init(&loop) == 0);
    TcpPair client = Connected(), server = Connected();
    std::optional<std::string> why;
    std::unique_ptr<Bridge> bridge;
    REQUIRE(Bridge::Open(
                &loop, std::move(client.inner), std::move(server.inner),
                [&](Bridge &, const std::string &w) { why = w; }, &bridge)
                .ok());
    CHECK(Exchange(client, server, &loop) == "ping/pong");
    if (reset) {
      // A client that closes with SO_LINGER 0 resets its connection.
      linger hard{1, 0};
      REQUIRE(::setsockopt(client.outer.get(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard) == 0);
      client.outer.reset();
    } else {
      client.outer.reset();
      server.outer.reset();
    }
    RunUntil(&loop, why);
    REQUIRE(why.has_value());
    if (reset) {
      CHECK(*why == "the client's connection: Connection reset by peer");
    } else {
      CHECK(why->empty());
    }
    bridge.reset();
    uv_run(&loop, UV_RUN_NOWAIT);
    CHECK(uv_loop_close(&loop) == 0);
  }
}
