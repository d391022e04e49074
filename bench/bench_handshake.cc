// bench_handshake.cc - what authentication adds to one connection, measured
// apart from everything else a call costs: alternately, a connection to a
// ninfd without a key that asks for its statistics, and one to a ninfd with
// a key that first proves it holds it (reading the key file, as libninf does
// for every connection), then asks the same.
//
//     bench_handshake PLAIN_PORT KEYED_PORT KEY_FILE [ITERS]
//
// Prints "handshake iters=N plain_us=MEDIAN keyed_us=MEDIAN added_us=DIFF".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ninf.pb.h"
#include "protocol/auth.h"
#include "protocol/frame.h"
#include "protocol/wire.h"

namespace {

using Clock = std::chrono::steady_clock;

// One connection: connect, authenticate when `key_file` is given, STATS.
// Returns microseconds, or -1 on an error (printed).
double OneConnection(int port, const char *key_file) {
  auto start = Clock::now();
  int fd = -1;
  ninf::Status st = ninf::ConnectTcp("127.0.0.1", port, 5000, &fd);
  if (!st.ok()) {
    std::fprintf(stderr, "bench_handshake: %s\n", st.ToString().c_str());
    return -1;
  }
  ninf::Channel ch(fd, 5000);
  if (key_file) {
    ninf::auth::KeyRing keys;
    st = ninf::auth::LoadKeyFile(key_file, &keys);
    if (st.ok()) st = ninf::auth::AuthenticateToServer(ch, keys.keys[0]);
  }
  ninf::wire::StatsRequest request;
  if (st.ok()) st = ch.SendFrame(ninf::FRAME_STATS, &request);
  ninf::wire::StatsReply reply;
  ninf::FrameHeader h;
  if (st.ok()) st = ch.RecvReply(ninf::FRAME_STATS_REPLY, 0, &reply, &h);
  if (!st.ok()) {
    std::fprintf(stderr, "bench_handshake: %s\n", st.ToString().c_str());
    return -1;
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s PLAIN_PORT KEYED_PORT KEY_FILE [ITERS]\n", argv[0]);
    return 2;
  }
  const int plain_port = std::atoi(argv[1]), keyed_port = std::atoi(argv[2]);
  const int iters = argc > 4 ? std::atoi(argv[4]) : 2000;
  std::vector<double> plain, keyed;
  for (int i = 0; i < iters + 20; ++i) {  // the first 20 of each warm up
    double p = OneConnection(plain_port, nullptr);
    double k = OneConnection(keyed_port, argv[3]);
    if (p < 0 || k < 0) return 1;
    if (i >= 20) {
      plain.push_back(p);
      keyed.push_back(k);
    }
  }
  double mp = Median(plain), mk = Median(keyed);
  std::printf("handshake iters=%d plain_us=%.1f keyed_us=%.1f added_us=%.1f\n", iters, mp, mk,
              mk - mp);
  return 0;
}
