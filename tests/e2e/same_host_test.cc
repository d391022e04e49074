// The same-host path, end to end: ninfd's Unix-domain socket, chosen by
// name (ninf://unix:/path/fn) or automatically after a loopback TCP call,
// with arrays through shared memory above NINF_TRANSPORT's threshold. The
// results must be those of the TCP path, byte for byte; what moved where
// shows in the daemon's statistics (bytes through its executables' sockets)
// and in the peers the daemon logs.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "client/ninf.h"
#include "ninf.pb.h"
#include "protocol/shared_memory.h"
#include "protocol/wire.h"
#include "tests/e2e/e2e_fixture.h"

namespace {

std::string SocketPath(const E2EDaemon &d) {
  return "/tmp/ninfd-" + std::to_string(d.port()) + ".sock";
}

std::vector<double> Ramp(long n, double scale) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (long i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = scale * static_cast<double>(i);
  return v;
}

// The daemon's count of bytes its executables received, once `calls` calls
// are counted (each is, when its CALL_DONE arrives: maybe just after the
// client has its result).
long BytesIn(const E2EDaemon &d, long calls) {
  REQUIRE(d.WaitForStat("completed", calls) == calls);
  return d.Stat("bytes_in");
}

// echo (INOUT), source (OUT) and sink (IN) of n doubles on the server that
// `prefix` names (three calls); checks the values.
void EchoAndSource(const std::string &prefix, long n) {
  std::vector<double> a = Ramp(n, 0.5);
  REQUIRE(Ninf_call((prefix + "echo").c_str(), n, a.data()) == 0);
  CHECK(a == Ramp(n, 0.5));
  std::vector<double> s(static_cast<std::size_t>(n), -1.0);
  REQUIRE(Ninf_call((prefix + "source").c_str(), n, s.data()) == 0);
  CHECK(s == Ramp(n, 1.0));
  std::vector<double> in = Ramp(n, 2.0);
  REQUIRE(Ninf_call((prefix + "sink").c_str(), n, in.data()) == 0);
}

}  // namespace

TEST_CASE("same_host_socket_by_name_small_and_shared_arrays", "[samehost]") {
  E2EDaemon d;
  struct stat st {};
  REQUIRE(::stat(SocketPath(d).c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  const std::string prefix = "ninf://unix:" + SocketPath(d) + "/";
  // 100 doubles (800 bytes) go through the socket; 1 Mi doubles (8 MiB)
  // through shared memory: the executables then receive almost nothing.
  const long before_small = BytesIn(d, 0);
  EchoAndSource(prefix, 100);
  const long small_in = BytesIn(d, 3) - before_small;
  CHECK(small_in >= 2 * 800);
  const long before_big = BytesIn(d, 3);
  EchoAndSource(prefix, 1 << 20);
  const long big_in = BytesIn(d, 6) - before_big;
  CHECK(big_in < 4096);  // headers only: 16 MiB of arrays went through memory
  CHECK(d.ZombieChildren() == 0);
}

// Run with NINF_TRANSPORT=socket (client options are read once per process).
TEST_CASE("same_host_socket_without_shared_memory", "[socketonly]") {
  E2EDaemon d;
  const std::string prefix = "ninf://unix:" + SocketPath(d) + "/";
  const long before = BytesIn(d, 0);
  EchoAndSource(prefix, 1 << 18);  // 2 MiB each way, through the socket
  CHECK(BytesIn(d, 3) - before >= 2 * (8 << 18));
}

TEST_CASE("same_host_path_is_chosen_automatically_after_loopback_tcp", "[samehost]") {
  E2EDaemon d;
  const std::string tcp = d.Name("");  // "ninf://127.0.0.1:PORT/"
  // The first call learns the socket from the interface reply; the later
  // ones (and new functions on the same server) take it.
  EchoAndSource(tcp, 16);
  const long before = BytesIn(d, 3);
  EchoAndSource(tcp, 1 << 20);
  CHECK(BytesIn(d, 6) - before < 4096);
}

TEST_CASE("the_first_call_takes_the_same_host_path_its_interface_reply_names", "[samehost]") {
  E2EDaemon d;  // a server this process has never called
  // Its interface is asked over loopback TCP; the call itself then goes
  // over the Unix-domain socket, its 8 MiB through shared memory.
  EchoAndSource(d.Name(""), 1 << 20);
  CHECK(BytesIn(d, 3) < 3 * 4096);
}

// Each call's resident peak, as the executable measured it: at least the
// 8 MiB array it held, and not much more (the process's own code and
// libraries), in --status and in the metrics.
TEST_CASE("executables_report_each_calls_resident_peak", "[samehost]") {
  E2EDaemon d;
  const long n = 1 << 20;
  EchoAndSource(d.Name(""), n);
  REQUIRE(d.WaitForStat("completed", 3) == 3);
  const long peak = d.Stat("function.echo.peak_rss_bytes");
  CHECK(peak >= 8 * n);
  CHECK(peak < 8 * n + (256l << 20));
}

namespace {

// vm.nr_hugepages, or -1 when it cannot be read.
long HugePages() {
  FILE *f = std::fopen("/proc/sys/vm/nr_hugepages", "r");
  long n = -1;
  if (f && std::fscanf(f, "%ld", &n) != 1) n = -1;
  if (f) std::fclose(f);
  return n;
}

bool SetHugePages(long n) {
  FILE *f = std::fopen("/proc/sys/vm/nr_hugepages", "w");
  if (!f) return false;
  const bool ok = std::fprintf(f, "%ld\n", n) > 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

// With huge pages reserved, big segments are made of them (whole 2 MiB
// pages, however large the call), both ends map them, and the results are
// the same. Needs root (the test reserves 16 pages and gives them back).
TEST_CASE("same_host_segments_of_huge_pages", "[samehost]") {
  const long before = HugePages();
  if (before < 0 || !SetHugePages(before + 16)) {
    WARN("cannot reserve huge pages (not root?): not tested");
    return;
  }
  struct Restore {
    long n;
    ~Restore() { SetHugePages(n); }
  } restore{before};
  if (HugePages() < before + 16) {
    WARN("the kernel reserved fewer huge pages than asked: not tested");
    return;
  }
  ninf::SharedSegment seg;
  const uint64_t odd = (5ull << 20) + 8;  // not a whole number of huge pages
  REQUIRE(ninf::SharedSegment::Create(odd, &seg).ok());
  struct stat st {};
  REQUIRE(::fstat(seg.fd(), &st) == 0);
  CHECK(st.st_blksize == (2 << 20));
  CHECK(seg.size() == (6ull << 20));
  std::memset(seg.data(), 7, odd);
  ninf::SharedSegment peer;
  REQUIRE(ninf::SharedSegment::Map(::dup(seg.fd()), odd, &peer).ok());
  CHECK(peer.size() == (6ull << 20));
  CHECK(peer.data()[odd - 1] == 7);
  // Below the threshold: ordinary pages, the size asked for.
  ninf::SharedSegment small;
  REQUIRE(ninf::SharedSegment::Create(ninf::kHugeSegmentMin - 64, &small).ok());
  CHECK(small.size() == ninf::kHugeSegmentMin - 64);
  // End to end, with a size that is no whole number of pages either.
  E2EDaemon d;
  const std::string prefix = "ninf://unix:" + SocketPath(d) + "/";
  EchoAndSource(prefix, 700001);
  CHECK(BytesIn(d, 3) < 3 * 4096);
  // Huge pages are no resident memory to Linux: the peak counts them apart.
  CHECK(d.Stat("function.echo.peak_rss_bytes") >= 8 * 700001);
  CHECK(d.ZombieChildren() == 0);
}

// A client that asks for shared memory must bring a sealed segment large
// enough for the call; the executable refuses anything else with a clear
// error and ninfd goes on serving.
TEST_CASE("same_host_bad_segments_are_refused", "[samehost]") {
  E2EDaemon d;
  const long n = 1024;
  auto attempt = [&](int segment_fd) {
    int fd = -1;
    REQUIRE(ninf::ConnectUnix(SocketPath(d), &fd).ok());
    ninf::Channel ch(fd, 5000);
    ninf::wire::CallRequest call;
    call.set_name("echo");
    call.set_call_id(1);
    REQUIRE(ch.SendFrame(ninf::FRAME_CALL, &call).ok());
    ninf::wire::Args args;
    args.add_scalars()->set_i(n);
    args.set_shared_memory(true);
    REQUIRE(ch.SendFrame(ninf::FRAME_ARGS, &args, {}, segment_fd).ok());
    ninf::wire::Result result;
    ninf::FrameHeader h;
    return ch.RecvReply(ninf::FRAME_RESULT, 0, &result, &h);
  };
  // No segment at all.
  ninf::Status none = attempt(-1);
  CHECK(none.code() == NINF_ERR_PROTOCOL);
  CHECK(none.message().find("no shared segment") != std::string::npos);
  // A memfd that is not sealed: the client could shrink it mid-call.
  int unsealed = ::memfd_create("test", MFD_CLOEXEC);
  REQUIRE(::ftruncate(unsealed, n * 8) == 0);
  CHECK(attempt(unsealed).code() == NINF_ERR_PROTOCOL);
  ::close(unsealed);
  // Sealed, but smaller than the call's arrays.
  ninf::SharedSegment small;
  REQUIRE(ninf::SharedSegment::Create(64, &small).ok());
  ninf::Status too_small = attempt(small.fd());
  CHECK(too_small.code() == NINF_ERR_PROTOCOL);
  CHECK(too_small.message().find("needs") != std::string::npos);
  // And the daemon still serves a good call.
  std::vector<double> a = Ramp(n, 3.0);
  REQUIRE(Ninf_call(("ninf://unix:" + SocketPath(d) + "/echo").c_str(), n, a.data()) == 0);
  CHECK(a == Ramp(n, 3.0));
  CHECK(d.ZombieChildren() == 0);
}
