#include "loadtest/run.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "loadtest/cgroup.h"
#include "loadtest/progress.h"
#include "loadtest/servers.h"

namespace ninf::loadtest {
namespace {

// Stop signals received (a client process counts its own: SIGTERM from
// the collector, or the terminal's SIGINT to the whole group), and the last.
volatile sig_atomic_t g_stop = 0;
volatile sig_atomic_t g_stop_signal = 0;
void OnStopSignal(int sig) {
  if (g_stop < 1000) g_stop = g_stop + 1;
  g_stop_signal = sig;
}

// Signals within this long of the first count as the first: `timeout`
// sends its one signal twice (to the process and to its group).
constexpr double kRepeatSeconds = 0.5;

void SleepUntil(double when) {
  const double left = when - Now();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

// The whole line in one write: below PIPE_BUF it is atomic.
void WriteLine(int fd, std::string line) {
  line += '\n';
  if (line.size() > PIPE_BUF - 1) line = line.substr(0, PIPE_BUF - 2) + "\n";
  const char *p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Opens the namespaces before any client starts, so that a wrong name is
// the run's error, not every client's.
bool OpenNetns(const std::vector<std::string> &names, std::vector<int> *fds, std::string *error) {
  for (const std::string &name : names) {
    const std::string path = name.find('/') == std::string::npos ? "/run/netns/" + name : name;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = "network namespace " + path + ": " + std::strerror(errno);
      for (int f : *fds) ::close(f);
      fds->clear();
      return false;
    }
    fds->push_back(fd);
  }
  return true;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

constexpr double kFirstBackoff = 0.1, kLastBackoff = 1.0;  // seconds

// The client's network namespace (`netns_fd` >= 0), entered before any
// connection. Sites share this host, so the same-host shortcut (Unix
// socket, shared memory) would bypass their links: TCP only there.
void EnterClientNetns(const RunConfig &c, int index, int netns_fd) {
  if (netns_fd < 0) return;
  if (::setns(netns_fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "ninf-loadtest: client %d: cannot enter network namespace %s: %s\n", index,
                 c.netns[static_cast<std::size_t>(index) % c.netns.size()].c_str(),
                 std::strerror(errno));
    ::_exit(3);
  }
  ::setenv("NINF_TRANSPORT", "tcp", 1);
}

// The server client `index` calls when there is no metaserver (clients
// spread round-robin over --servers).
const std::string &ServerOfClient(const RunConfig &c, int index) {
  return c.servers[static_cast<std::size_t>(index) % c.servers.size()];
}

// Where the client's calls go: through the metaserver (set in the
// environment, where the client library reads it; no prefix), or to its
// server by a "ninf://host:port/" prefix.
std::string ClientPrefix(const RunConfig &c, int index) {
  if (!c.metaserver.empty()) {
    ::setenv("NINF_METASERVER", c.metaserver.c_str(), 1);
    return {};
  }
  return "ninf://" + ServerOfClient(c, index) + "/";
}

// After a call that could not connect, the next waits for its tick and at
// least `delay` (doubling to a second): a dead server must not turn a
// closed loop into thousands of failed calls a second.
struct ClientBackoff {
  double not_before = 0, delay = kFirstBackoff;

  void After(const CallResult &r) {
    if (r.outcome == "unreachable") {
      not_before = Now() + delay;
      delay = std::min(kLastBackoff, 2 * delay);
    } else {
      not_before = 0;
      delay = kFirstBackoff;
    }
  }
};

// The CSV row of one call that began at `start`; its response time ends
// now.
CallRow RowOfCall(const RunConfig &c, int index, int step, int size, double t0, double start,
                  const CallResult &r, const Workload &work) {
  CallRow row;
  row.client = index;
  row.step = step;
  row.size = size;
  row.start = start - t0;
  row.response = Now() - start;
  row.wait = r.info.queue_seconds;
  row.transfer = r.info.server_recv_seconds + r.info.recv_seconds;
  row.compute = r.info.compute_seconds;
  row.bytes = r.info.send_bytes + r.info.recv_bytes;
  row.flops = work.Flops();
  row.server = r.info.server;
  // A call that never reached its server still counts against it.
  if (row.server.empty() && c.metaserver.empty()) row.server = ServerOfClient(c, index);
  row.threads = r.info.threads;
  row.outcome = r.outcome;
  row.detail = r.detail;
  return row;
}

// One client process: the seed's model, then _exit. `netns_fd` >= 0: the
// client's network namespace, entered first.
[[noreturn]] void ClientMain(const RunConfig &c, int index, double t0, int fd, int netns_fd) {
  EnterClientNetns(c, index, netns_fd);
  const std::string prefix = ClientPrefix(c, index);
  std::map<int, std::unique_ptr<Workload>> works;  // made at a size's first call
  std::mt19937_64 rng(0x5eed0000ull + static_cast<uint64_t>(index));
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<double> weights = c.mix;
  if (weights.empty()) weights.assign(c.sizes.size(), 1.0);
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
  const double phase = FirstTickOffset(c.phase, c.interval, index);
  ClientBackoff backoff;
  for (int step = 0; !g_stop; ++step) {
    if (c.steps > 0 && step >= c.steps) break;
    // The tick, or now when a long call made the client late for it.
    const double tick = std::max(t0 + phase + step * c.interval, backoff.not_before);
    if (c.duration > 0 && std::max(tick, Now()) >= t0 + c.duration) break;
    SleepUntil(tick);
    if (coin(rng) >= c.probability) continue;
    // One size takes no draw: single-size runs keep the generator's sequence.
    const int size = c.sizes.size() == 1 ? c.sizes[0] : c.sizes[pick(rng)];
    std::unique_ptr<Workload> &work = works[size];
    if (!work) work = MakeWorkload(c.workload, size);
    const double start = Now();
    CallResult r = work->Call(prefix, (static_cast<uint64_t>(index) << 32) | step);
    backoff.After(r);
    WriteLine(fd, FormatCsvRow(RowOfCall(c, index, step, size, t0, start, r, *work)));
  }
  ::close(fd);
  ::_exit(0);  // not exit(): the parent's stdio buffers are not ours to flush
}

double CpuSeconds(int who) {
  rusage u{};
  if (::getrusage(who, &u) != 0) return 0;
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

// The phase has a generator of its own, so that both phases make the same
// calls (a client's sizes and coins keep their sequence).
double FirstTickOffset(RunConfig::Phase phase, double interval, int index) {
  if (phase == RunConfig::Phase::kAligned || interval <= 0) return 0;
  std::mt19937_64 rng(0x9a5e0000ull + static_cast<uint64_t>(index));
  return std::uniform_real_distribution<double>(0.0, interval)(rng);
}

ServerSample ParseSample(const std::string &text, double at) {
  ServerSample s;
  s.at = at;
  s.has_stats = true;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon), value = line.substr(colon + 1);
    try {
      if (name == "busy_core_seconds")
        s.busy_core_seconds = std::stod(value);
      else if (name == "cores")
        s.cores = std::max(1, std::stoi(value));
      else if (name == "running")
        s.running = std::stoi(value);
      else if (name == "queued")
        s.queued = std::stoi(value);
      else if (name == "load_average_1")
        s.load_average = std::stod(value);
    } catch (const std::exception &) {
      // A value that is not a number leaves the default.
    }
  }
  return s;
}

namespace {

// Forks the client processes, each writing its rows into a pipe of its
// own; false (with *error) if one could not be started, the others then
// stopped and reaped.
bool StartClients(const RunConfig &c, double t0, const std::vector<int> &netns_fds,
                  std::vector<pid_t> *pids, std::vector<pollfd> *pipes, std::string *error) {
  for (int i = 0; i < c.clients; ++i) {
    int fds[2];
    if (::pipe(fds) != 0) {
      *error = std::string("pipe: ") + std::strerror(errno);
      break;
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
      *error = std::string("fork: ") + std::strerror(errno);
      ::close(fds[0]);
      ::close(fds[1]);
      break;
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (const pollfd &p : *pipes) ::close(p.fd);
      ClientMain(
          c, i, t0, fds[1],
          netns_fds.empty() ? -1 : netns_fds[static_cast<std::size_t>(i) % netns_fds.size()]);
    }
    ::close(fds[1]);
    pids->push_back(pid);
    pipes->push_back({fds[0], POLLIN, 0});
  }
  if (static_cast<int>(pids->size()) == c.clients) return true;
  for (pid_t pid : *pids) ::kill(pid, SIGTERM);
  for (pid_t pid : *pids) ::waitpid(pid, nullptr, 0);
  for (const pollfd &p : *pipes) ::close(p.fd);
  return false;
}

// The collector's side of the clients' pipes: their CSV lines become rows.
class RowCollector {
 public:
  RowCollector(const RunConfig &c, std::FILE *csv, const std::vector<pid_t> &pids,
               Progress *progress, RunResult *result, std::size_t clients)
      : c_(c), csv_(csv), pids_(pids), progress_(progress), result_(result), partial_(clients) {}

  // Reads what client `i` wrote; false once its pipe is closed.
  bool Read(std::size_t i, int fd) {
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) return false;
    partial_[i].append(buf, static_cast<std::size_t>(n));
    for (std::size_t eol; (eol = partial_[i].find('\n')) != std::string::npos;) {
      const std::string line = partial_[i].substr(0, eol);
      partial_[i].erase(0, eol + 1);
      Take(line);
    }
    return true;
  }

 private:
  void Take(const std::string &line) {
    CallRow row;
    if (!ParseCsvRow(line, &row)) return;
    progress_->Count(row);
    result_->rows.push_back(row);
    if (csv_) std::fprintf(csv_, "%s\n", line.c_str());
    if (row.outcome == "unreachable" && unreachable_.insert(row.server).second)
      progress_->Note("server " + row.server + " unreachable at " + Seconds(row.start) +
                      " s (client " + std::to_string(row.client) + ": " + row.detail +
                      "); its clients retry at their next tick, after a pause");
    if (c_.fail_fast && row.outcome != "ok" && !result_->stopped_at_failure) {
      // The first failure ends the run: the clients are stopped at once,
      // their calls in progress with them (not counted as failures).
      progress_->Note("--fail-fast: client " + std::to_string(row.client) + " step " +
                      std::to_string(row.step) + " at " + Seconds(row.start) +
                      " s: " + row.outcome + ": " + row.detail);
      result_->stopped_at_failure = true;
      for (pid_t pid : pids_) ::kill(pid, SIGKILL);
    }
  }

  const RunConfig &c_;
  std::FILE *csv_;
  const std::vector<pid_t> &pids_;
  Progress *progress_;
  RunResult *result_;
  std::vector<std::string> partial_;
  std::set<std::string> unreachable_;  // servers already reported so
};

// Until every client's pipe is closed: their rows, and the servers'
// statistics sampled at jittered instants.
void Collect(const RunConfig &c, double t0, std::vector<pollfd> &pipes,
             const std::vector<pid_t> &pids, RowCollector &rows, Sampler &sampler,
             Progress &progress, RunResult *result) {
  std::size_t open = pipes.size();
  double next_sample = t0;
  // Sampling periods are jittered, uniform in [0.5, 1.5] x --sample-ms: a
  // fixed period is phase-locked to aligned ticks (0.5 s samples of 0.5 s
  // ticks all land on the bursts) and biases running, queued and jobs; at
  // random instants their means are time averages.
  std::mt19937_64 jitter_rng(0x5a3b1e00ull);
  std::uniform_real_distribution<double> jitter(0.5, 1.5);
  bool forwarded = false, killed = false;
  int signals_at_first = 0;  // g_stop once kRepeatSeconds have passed since the first
  while (open > 0) {
    if (g_stop && !forwarded) {  // the clients stop after their current call
      for (pid_t pid : pids) ::kill(pid, SIGTERM);
      forwarded = true;
      result->interrupted_by = g_stop_signal;
      result->interrupted_at = std::max(0.0, Now() - t0);
      progress.Stop();
      progress.Note(std::string(strsignal(g_stop_signal)) + ": no more calls; a call under way " +
                    "has " + Seconds(kStopGraceSeconds) +
                    " s to end (a second signal abandons it now)");
    }
    const double since_stop = Now() - t0 - result->interrupted_at;
    if (forwarded && signals_at_first == 0 && since_stop >= kRepeatSeconds)
      signals_at_first = g_stop;
    const bool again = signals_at_first > 0 && g_stop > signals_at_first;
    if (forwarded && !killed && (again || since_stop >= kStopGraceSeconds)) {
      // Those still in a call: killed, the call abandoned.
      for (std::size_t i = 0; i < pipes.size(); ++i)
        if (pipes[i].fd >= 0 && ::kill(pids[i], SIGKILL) == 0) ++result->abandoned;
      killed = true;
    }
    const double now = Now();
    if (now >= next_sample) {
      sampler.Sample(t0, &result->samples);
      next_sample = now + jitter(jitter_rng) * c.sample_ms / 1000.0;
    }
    progress.Show(std::max(0.0, now - t0), false);
    const int wait_ms = static_cast<int>(std::max(0.0, (next_sample - Now()) * 1000)) + 1;
    if (::poll(pipes.data(), pipes.size(), wait_ms) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < pipes.size(); ++i) {
      if (pipes[i].fd < 0 || !(pipes[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (rows.Read(i, pipes[i].fd)) continue;
      ::close(pipes[i].fd);
      pipes[i].fd = -1;
      --open;
    }
  }
}

}  // namespace

bool Run(const RunConfig &c, std::FILE *csv, RunResult *result, std::string *error) {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::vector<CgroupSource> groups;
  if (!OpenCgroups(c, &groups, error)) return false;
  std::vector<int> netns_fds;
  if (!OpenNetns(c.netns, &netns_fds, error)) return false;
  if (!CheckServers(c, netns_fds, error)) {
    for (int f : netns_fds) ::close(f);
    return false;
  }
  const double t0 = Now() + 0.2;  // the clients' ticks count from here
  std::fflush(nullptr);           // nothing buffered may be written twice
  std::vector<pid_t> pids;
  std::vector<pollfd> pipes;
  const bool started = StartClients(c, t0, netns_fds, &pids, &pipes, error);
  for (int f : netns_fds) ::close(f);
  if (!started) return false;

  Progress progress(c.progress, Plan{c.clients, c.interval, c.probability, c.duration, c.steps});
  Sampler sampler(c, groups, &progress);
  RowCollector rows(c, csv, pids, &progress, result, pipes.size());
  Collect(c, t0, pipes, pids, rows, sampler, progress, result);
  sampler.Sample(t0, &result->samples);  // the last figures, after the last call
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    // (Clients stopped on purpose, by --fail-fast or a stop signal, are not failures.)
    const bool stopped = result->stopped_at_failure || result->interrupted_by != 0;
    if ((!WIFEXITED(status) || WEXITSTATUS(status) != 0) && !stopped) ++result->client_failures;
  }
  result->wall_seconds = Now() - t0;
  progress.Show(result->wall_seconds, true);
  result->collector_cpu_seconds = CpuSeconds(RUSAGE_SELF);
  result->clients_cpu_seconds = CpuSeconds(RUSAGE_CHILDREN);
  return true;
}

}  // namespace ninf::loadtest
