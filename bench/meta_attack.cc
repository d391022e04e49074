// meta_attack.cc - good clients' placements at a running ninf-meta, quiet or
// while hostile peers attack it (bench/meta_attack.sh; issue 28, H6 H7 H9).
//
//     meta_attack --meta HOST:PORT [--seconds S] [--clients N]
//                 [--attacks h6,h7,h9] [--h6-rate R] [--h7-rate R] [--h9-rate R]
//
// It registers four fake servers of one function from 127.0.0.1 (kept alive
// by load reports every 200 ms; they are never called: what is measured is
// the placement), then N good clients (each its own connection, site
// "good") report probes that make s0 their truly best server (100 MB/s; the
// others 10 MB/s) and place calls in a closed loop for S seconds: PLACE of
// 10 MB of arguments, then the OUTCOME of their ticket. The attacks run
// meanwhile, each from its own loopback address at a fixed rate:
//   h6  127.0.0.2: PROBED claiming site "good" with s0 taking 99,000 s, and
//       OUTCOMEs with made-up tickets and 99,120 s transfers
//   h7  127.0.0.3: a registered fake server sending LOADs of 5,000 new
//       function names each
//   h9  127.0.0.4: PROBED with a new site name each
// The attackers run at nice 10 (see Paced). Prints one line:
//   meta_attack attacks=.. placements=.. p50_us=.. p99_us=.. max_us=..
//     correct=.. (placed first on s0) errors=.. attack_requests=..
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ninf.pb.h"
#include "protocol/ask.h"
#include "protocol/frame.h"
#include "protocol/wire.h"

namespace {

namespace wire = ninf::wire;
using Clock = std::chrono::steady_clock;

std::string g_host = "127.0.0.1";
int g_port = 0;
std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_attack_requests{0};

std::unique_ptr<ninf::Channel> Connect(const char *source) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return nullptr;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(g_port));
  ::inet_pton(AF_INET, g_host.c_str(), &to.sin_addr);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr *>(&to), sizeof to) != 0) {
    ::close(fd);
    return nullptr;
  }
  return std::make_unique<ninf::Channel>(fd, 10000);
}

wire::ServerRegistration Registration(const std::string &id, int port) {
  wire::ServerRegistration r;
  r.set_server_id(id);
  r.set_address("127.0.0.1:" + std::to_string(port));
  r.set_site("bench");
  r.set_cores(1);
  r.set_slots(4);
  r.set_flops_per_second(1e9);
  r.set_lease_ms(60000);
  wire::FunctionInterface *f = r.add_functions();
  f->set_name("work");
  wire::Param *p = f->add_params();
  p->set_name("n");
  p->set_mode(wire::MODE_IN);
  p->set_type(wire::TYPE_LONG);
  return r;
}

wire::ProbeOutcome Probe(const std::string &site, const std::string &server, double latency,
                         double bandwidth) {
  wire::ProbeOutcome p;
  p.set_site(site);
  p.set_server_id(server);
  p.set_small_bytes(1024);
  p.set_small_seconds(latency + 1024 / bandwidth);
  p.set_large_bytes(1 << 20);
  p.set_large_seconds(latency + (1 << 20) / bandwidth);
  return p;
}

// Runs `step` `rate` times a second until stopped, at nice 10: the
// attackers' own CPU (they share the 2 vCPUs with the good clients here,
// where a real attacker has machines of its own) should not be what slows
// the good clients; ninf-meta's work on their requests should.
template <class Step>
void Paced(double rate, Step step) {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
  const auto period = std::chrono::duration<double>(1.0 / rate);
  auto next = Clock::now();
  while (!g_stop) {
    if (!step()) return;
    g_attack_requests.fetch_add(1);
    next += std::chrono::duration_cast<Clock::duration>(period);
    std::this_thread::sleep_until(next);
  }
}

void AttackH6(double rate) {
  auto ch = Connect("127.0.0.2");
  if (!ch) return;
  uint64_t n = 0;
  Paced(rate, [&] {
    wire::MetaAck ack;
    if (n++ % 2 == 0) return ninf::Ask(*ch, Probe("good", "s0", 99000, 10), &ack).ok();
    wire::CallOutcome o;
    o.set_ticket(n);
    o.set_server_id("s0");
    o.set_site("good");
    o.set_out_bytes(100 << 20);
    o.set_out_seconds(99120);
    ninf::Status st = ninf::Ask(*ch, o, &ack);
    return st.ok() || st.code() == NINF_ERR_INVALID_ID;
  });
}

void AttackH7(double rate) {
  auto ch = Connect("127.0.0.3");
  if (!ch) return;
  wire::MetaAck ack;
  if (!ninf::Ask(*ch, Registration("evil", 9), &ack).ok()) return;
  // 64 reports of 5,000 names each, encoded before the attack (the encoding
  // is the attacker's cost, not ninf-meta's), sent in turn.
  std::vector<std::string> frames;
  for (int round = 0; round < 64; ++round) {
    wire::LoadReport load;
    load.set_server_id("evil");
    load.set_calls_admitted(static_cast<uint64_t>(round));
    for (int i = 0; i < 5000; ++i) {
      wire::FunctionLoad *f = load.add_functions();
      f->set_name("junk_" + std::to_string(round) + "_" + std::to_string(i));
      f->set_calls(1);
    }
    frames.emplace_back();
    ninf::AppendFrame(&frames.back(), ninf::FRAME_META_LOAD, &load);
  }
  std::size_t next = 0;
  Paced(rate, [&] {
    const std::string &frame = frames[next++ % frames.size()];
    for (std::size_t at = 0; at < frame.size();) {
      ssize_t n = ::send(ch->fd(), frame.data() + at, frame.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    ninf::FrameHeader h;
    return ch->RecvReply(ninf::FRAME_META_ACK, 0, &ack, &h).ok();
  });
}

void AttackH9(double rate) {
  auto ch = Connect("127.0.0.4");
  if (!ch) return;
  uint64_t n = 0;
  Paced(rate, [&] {
    wire::MetaAck ack;
    return ninf::Ask(*ch, Probe("site" + std::to_string(n++), "s0", 0.001, 100e6), &ack).ok();
  });
}

struct Result {
  std::vector<double> us;
  uint64_t correct = 0, errors = 0;
};

void GoodClient(int index, Result *out) {
  auto ch = Connect("127.0.0.1");
  if (!ch) {
    ++out->errors;
    return;
  }
  wire::MetaAck ack;
  // Enough samples for a forecast: s0 fast, the others slow.
  for (int i = 0; i < 8; ++i)
    for (int s = 0; s < 4; ++s)
      (void)ninf::Ask(*ch, Probe("good", "s" + std::to_string(s), 0.001, s == 0 ? 100e6 : 10e6),
                      &ack);
  (void)index;
  wire::PlaceRequest place;
  place.set_function("work");
  place.set_site("good");
  place.set_in_bytes(10 << 20);
  place.set_limit(1);
  place.set_no_probe(true);
  while (!g_stop) {
    wire::Placement placed;
    const auto start = Clock::now();
    ninf::Status st = ninf::Ask(*ch, place, &placed);
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (!st.ok() || placed.targets_size() == 0) {
      ++out->errors;
      continue;
    }
    out->us.push_back(us);
    if (placed.targets(0).server_id() == "s0") ++out->correct;
    wire::CallOutcome o;
    o.set_ticket(placed.ticket());
    o.set_server_id(placed.targets(0).server_id());
    o.set_site("good");
    if (!ninf::Ask(*ch, o, &ack).ok()) ++out->errors;
  }
}

double Percentile(std::vector<double> &v, double p) {
  if (v.empty()) return 0;
  std::size_t k =
      std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char **argv) {
  double seconds = 10, h6_rate = 500, h7_rate = 20, h9_rate = 2000;
  int clients = 2;
  std::string attacks;
  for (int i = 1; i < argc; ++i) {
    auto arg = [&](const char *name) { return std::strcmp(argv[i], name) == 0 && i + 1 < argc; };
    if (arg("--meta")) {
      std::string m = argv[++i];
      g_host = m.substr(0, m.rfind(':'));
      g_port = std::atoi(m.c_str() + m.rfind(':') + 1);
    } else if (arg("--seconds")) {
      seconds = std::atof(argv[++i]);
    } else if (arg("--clients")) {
      clients = std::atoi(argv[++i]);
    } else if (arg("--attacks")) {
      attacks = argv[++i];
    } else if (arg("--h6-rate")) {
      h6_rate = std::atof(argv[++i]);
    } else if (arg("--h7-rate")) {
      h7_rate = std::atof(argv[++i]);
    } else if (arg("--h9-rate")) {
      h9_rate = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "meta_attack: unknown argument %s (see the file's header)\n", argv[i]);
      return 2;
    }
  }
  if (g_port <= 0) {
    std::fprintf(stderr, "meta_attack: --meta HOST:PORT is required\n");
    return 2;
  }
  // The four servers, each on its own connection (one server per connection).
  std::vector<std::unique_ptr<ninf::Channel>> servers;
  for (int s = 0; s < 4; ++s) {
    auto ch = Connect("127.0.0.1");
    wire::MetaAck ack;
    if (!ch || !ninf::Ask(*ch, Registration("s" + std::to_string(s), 20000 + s), &ack).ok()) {
      std::fprintf(stderr, "meta_attack: cannot register server s%d\n", s);
      return 1;
    }
    servers.push_back(std::move(ch));
  }
  std::thread keepalive([&] {
    while (!g_stop) {
      for (int s = 0; s < 4; ++s) {
        wire::LoadReport load;
        load.set_server_id("s" + std::to_string(s));
        wire::MetaAck ack;
        (void)ninf::Ask(*servers[static_cast<std::size_t>(s)], load, &ack);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
  std::vector<std::thread> threads;
  if (attacks.find("h6") != std::string::npos) threads.emplace_back(AttackH6, h6_rate);
  if (attacks.find("h7") != std::string::npos) threads.emplace_back(AttackH7, h7_rate);
  if (attacks.find("h9") != std::string::npos) threads.emplace_back(AttackH9, h9_rate);
  // Let the attacks take hold before measuring.
  if (!threads.empty()) std::this_thread::sleep_for(std::chrono::seconds(2));
  std::vector<Result> results(static_cast<std::size_t>(clients));
  std::vector<std::thread> good;
  for (int c = 0; c < clients; ++c)
    good.emplace_back(GoodClient, c, &results[static_cast<std::size_t>(c)]);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  g_stop = true;
  for (auto &t : good) t.join();
  for (auto &t : threads) t.join();
  keepalive.join();
  Result all;
  for (Result &r : results) {
    all.us.insert(all.us.end(), r.us.begin(), r.us.end());
    all.correct += r.correct;
    all.errors += r.errors;
  }
  const std::size_t n = all.us.size();
  const double p50 = Percentile(all.us, 0.50), p99 = Percentile(all.us, 0.99),
               max = n ? *std::max_element(all.us.begin(), all.us.end()) : 0;
  std::printf(
      "meta_attack attacks=%s clients=%d placements=%zu p50_us=%.1f p99_us=%.1f max_us=%.1f "
      "correct=%.4f errors=%llu attack_requests=%llu\n",
      attacks.empty() ? "none" : attacks.c_str(), clients, n, p50, p99, max,
      n ? static_cast<double>(all.correct) / static_cast<double>(n) : 0.0,
      static_cast<unsigned long long>(all.errors),
      static_cast<unsigned long long>(g_attack_requests.load()));
  return all.errors == 0 && n > 0 ? 0 : 1;
}
