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
#include <sstream>
#include <thread>

#include "daemon/status_tool.h"
#include "loadtest/cgroup.h"
#include "protocol/address.h"
#include "protocol/default_ports.h"

namespace ninf::loadtest {
namespace {

volatile sig_atomic_t g_stop = 0;
void OnStopSignal(int) { g_stop = 1; }

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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

// One client process: the seed's model, then _exit. `netns_fd` >= 0: the
// client's network namespace, entered first. Sites share this host, so the
// same-host shortcut (Unix socket, shared memory) would bypass their links:
// TCP only there.
[[noreturn]] void ClientMain(const RunConfig &c, int index, double t0, int fd, int netns_fd) {
  if (netns_fd >= 0) {
    if (::setns(netns_fd, CLONE_NEWNET) != 0) {
      std::fprintf(stderr, "ninf-loadtest: client %d: cannot enter network namespace %s: %s\n",
                   index, c.netns[static_cast<std::size_t>(index) % c.netns.size()].c_str(),
                   std::strerror(errno));
      ::_exit(3);
    }
    ::setenv("NINF_TRANSPORT", "tcp", 1);
  }
  std::string prefix;
  if (!c.metaserver.empty())
    ::setenv("NINF_METASERVER", c.metaserver.c_str(), 1);
  else
    prefix = "ninf://" + c.servers[static_cast<std::size_t>(index) % c.servers.size()] + "/";
  std::map<int, std::unique_ptr<Workload>> works;  // made at a size's first call
  std::mt19937_64 rng(0x5eed0000ull + static_cast<uint64_t>(index));
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<double> weights = c.mix;
  if (weights.empty()) weights.assign(c.sizes.size(), 1.0);
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
  const double phase = FirstTickOffset(c.phase, c.interval, index);
  for (int step = 0; !g_stop; ++step) {
    if (c.steps > 0 && step >= c.steps) break;
    // The tick, or now when a long call made the client late for it.
    const double tick = t0 + phase + step * c.interval;
    if (c.duration > 0 && std::max(tick, Now()) >= t0 + c.duration) break;
    SleepUntil(tick);
    if (coin(rng) >= c.probability) continue;
    // One size takes no draw: single-size runs keep the generator's sequence.
    const int size = c.sizes.size() == 1 ? c.sizes[0] : c.sizes[pick(rng)];
    std::unique_ptr<Workload> &work = works[size];
    if (!work) work = MakeWorkload(c.workload, size);
    const double start = Now();
    CallResult r = work->Call(prefix, (static_cast<uint64_t>(index) << 32) | step);
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
    row.flops = work->Flops();
    row.server = r.info.server;
    row.threads = r.info.threads;
    row.outcome = r.outcome;
    row.detail = r.detail;
    WriteLine(fd, FormatCsvRow(row));
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

// The progress line; its totals grow with each row instead of being
// recounted from all of them.
class Progress {
 public:
  explicit Progress(bool on) : on_(on), tty_(::isatty(2) != 0) {}
  void Count(const CallRow &row) {
    ++calls_;
    if (row.outcome != "ok")
      ++failed_;
    else
      work_ += row.flops;
  }
  void Show(double elapsed, bool last) {
    if (!on_) return;
    if (!last && elapsed - shown_ < (tty_ ? 1.0 : 10.0)) return;
    shown_ = elapsed;
    std::fprintf(stderr, "%sloadtest: %6.1f s, %zu calls (%zu failed), %.2f GF/s%s",
                 tty_ ? "\r" : "", elapsed, calls_, failed_,
                 elapsed > 0 ? work_ / elapsed / 1e9 : 0.0, tty_ && !last ? "" : "\n");
  }

 private:
  bool on_, tty_;
  double shown_ = -1e9;
  std::size_t calls_ = 0, failed_ = 0;
  double work_ = 0;
};

// The control group of sampled server i: one per server, or one for all.
const CgroupSource *CgroupOf(const std::vector<CgroupSource> &groups, std::size_t i) {
  if (groups.empty()) return nullptr;
  return &groups[groups.size() == 1 ? 0 : i];
}

void Sample(const RunConfig &c, const std::vector<CgroupSource> &groups, double t0, RunResult *r) {
  for (std::size_t i = 0; i < c.sampled.size(); ++i) {
    const std::string &server = c.sampled[i];
    ServerSample sample;
    HostPort hp;
    std::string text;
    if (ParseHostPort(server, HostPort("127.0.0.1", kNinfdPort), &hp).ok() &&
        daemon::QueryStats(hp.host, hp.port, 2000, c.key_file, &text).ok())
      sample = ParseSample(text, 0);
    // Stamped when the group's counter is read: the measurement's own time.
    sample.at = Now() - t0;
    if (const CgroupSource *group = CgroupOf(groups, i)) {
      if (std::optional<double> cpu = CgroupCpuSeconds(*group)) {
        sample.cpu_seconds = *cpu;
        sample.cpu_count = group->cpus;
        sample.cgroup = group->dir;
      }
    }
    if (sample.has_stats || sample.cpu_seconds >= 0) r->samples[server].push_back(sample);
  }
}

bool OpenCgroups(const RunConfig &c, std::vector<CgroupSource> *groups, std::string *error) {
  if (c.server_cgroups.empty()) return true;
  if (c.server_cgroups.size() != 1 && c.server_cgroups.size() != c.sampled.size()) {
    *error = std::to_string(c.server_cgroups.size()) + " --server-cgroup for " +
             std::to_string(c.sampled.size()) + " sampled servers: give one per server, or one";
    return false;
  }
  for (const std::string &dir : c.server_cgroups) {
    CgroupSource group;
    if (!OpenCgroup(dir, c.server_cpus, &group, error)) return false;
    groups->push_back(group);
  }
  return true;
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
  const double t0 = Now() + 0.2;  // the clients' ticks count from here
  std::fflush(nullptr);           // nothing buffered may be written twice
  std::vector<pid_t> pids;
  std::vector<pollfd> pipes;
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
      for (const pollfd &p : pipes) ::close(p.fd);
      ClientMain(
          c, i, t0, fds[1],
          netns_fds.empty() ? -1 : netns_fds[static_cast<std::size_t>(i) % netns_fds.size()]);
    }
    ::close(fds[1]);
    pids.push_back(pid);
    pipes.push_back({fds[0], POLLIN, 0});
  }
  for (int f : netns_fds) ::close(f);
  if (static_cast<int>(pids.size()) < c.clients) {
    for (pid_t pid : pids) ::kill(pid, SIGTERM);
    for (pid_t pid : pids) ::waitpid(pid, nullptr, 0);
    for (const pollfd &p : pipes) ::close(p.fd);
    return false;
  }

  Progress progress(c.progress);
  std::vector<std::string> partial(pipes.size());
  std::size_t open = pipes.size();
  double next_sample = t0;
  bool forwarded = false;
  while (open > 0) {
    if (g_stop && !forwarded) {  // Ctrl-C: the clients stop after their current call
      for (pid_t pid : pids) ::kill(pid, SIGTERM);
      forwarded = true;
    }
    const double now = Now();
    if (now >= next_sample) {
      Sample(c, groups, t0, result);
      next_sample = now + c.sample_ms / 1000.0;
    }
    progress.Show(std::max(0.0, now - t0), false);
    const int wait_ms = static_cast<int>(std::max(0.0, (next_sample - Now()) * 1000)) + 1;
    if (::poll(pipes.data(), pipes.size(), wait_ms) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < pipes.size(); ++i) {
      if (pipes[i].fd < 0 || !(pipes[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const ssize_t n = ::read(pipes[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(pipes[i].fd);
        pipes[i].fd = -1;
        --open;
        continue;
      }
      partial[i].append(buf, static_cast<std::size_t>(n));
      std::size_t eol;
      while ((eol = partial[i].find('\n')) != std::string::npos) {
        const std::string line = partial[i].substr(0, eol);
        partial[i].erase(0, eol + 1);
        CallRow row;
        if (!ParseCsvRow(line, &row)) continue;
        progress.Count(row);
        result->rows.push_back(row);
        if (csv) std::fprintf(csv, "%s\n", line.c_str());
      }
    }
  }
  Sample(c, groups, t0, result);  // the last figures, after the last call
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++result->client_failures;
  }
  result->wall_seconds = Now() - t0;
  progress.Show(result->wall_seconds, true);
  result->collector_cpu_seconds = CpuSeconds(RUSAGE_SELF);
  result->clients_cpu_seconds = CpuSeconds(RUSAGE_CHILDREN);
  return true;
}

}  // namespace ninf::loadtest
