#include "loadtest/servers.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "daemon/status_tool.h"
#include "loadtest/run.h"
#include "protocol/address.h"
#include "protocol/default_ports.h"

namespace ninf::loadtest {
namespace {

constexpr int kQueryTimeoutMs = 2000;

// The statistics of `server`, reached as the run's calls reach it (its key,
// and TLS with the clients' files when NINF_TLS_CA is set).
Status Query(const std::string &server, const RunConfig &c, std::string *text) {
  HostPort hp;
  Status st = ParseHostPort(server, HostPort("127.0.0.1", kNinfdPort), &hp);
  if (!st.ok()) return st;
  const daemon::ToolAccess access{.key_file = c.key_file,
                                  .tls = {.ca = c.tls_ca, .cert = c.tls_cert, .key = c.tls_key}};
  // The whole address: a reverse server's is name@relay:port, asked through
  // its relay (the relay's own host:port would answer as the relay).
  return daemon::QueryStats(hp, kQueryTimeoutMs, access, text);
}

// Answers at all: a refused key, a refused view, are answers.
bool Unreachable(const Status &st) {
  return st.code() == NINF_ERR_CONNECT || st.code() == NINF_ERR_TIMEOUT ||
         st.code() == NINF_ERR_INVALID_ARGUMENT;
}

// The control group of sampled server i: one per server, or one for all.
const CgroupSource *CgroupOf(const std::vector<CgroupSource> &groups, std::size_t i) {
  if (groups.empty()) return nullptr;
  return &groups[groups.size() == 1 ? 0 : i];
}

}  // namespace

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

bool CheckServers(const RunConfig &c, const std::vector<int> &netns_fds, std::string *error) {
  const std::vector<std::string> targets =
      c.metaserver.empty() ? c.servers : std::vector<std::string>{c.metaserver};
  const char *what = c.metaserver.empty() ? "server" : "metaserver";
  if (netns_fds.empty()) {
    for (const std::string &target : targets) {
      std::string text;
      const Status st = Query(target, c, &text);
      if (Unreachable(st)) {
        *error = std::string(what) + " " + target + " unreachable: " + st.ToString() +
                 " (nothing was run; is it running, and listening there?)";
        return false;
      }
    }
    return true;
  }
  // Client i calls targets[i % T] from netns[i % N]: each pair that occurs,
  // from inside its namespace, in a child (setns would move this process).
  std::set<std::pair<std::size_t, std::size_t>> pairs;
  for (int i = 0; i < c.clients; ++i)
    pairs.insert({static_cast<std::size_t>(i) % netns_fds.size(),
                  static_cast<std::size_t>(i) % targets.size()});
  std::fflush(nullptr);
  for (const auto &[ns, t] : pairs) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      *error = std::string("fork: ") + std::strerror(errno);
      return false;
    }
    if (pid == 0) {
      if (::setns(netns_fds[ns], CLONE_NEWNET) != 0) ::_exit(3);
      std::string text;
      const Status st = Query(targets[t], c, &text);
      if (Unreachable(st)) {
        std::fprintf(stderr, "ninf-loadtest: %s\n", st.ToString().c_str());
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      *error = std::string(what) + " " + targets[t] + " unreachable from network namespace " +
               c.netns[ns] +
               (WIFEXITED(status) && WEXITSTATUS(status) == 3 ? " (cannot enter it)" : "") +
               " (nothing was run)";
      return false;
    }
  }
  return true;
}

std::string SamplingFailure(const std::string &server, const Status &st) {
  std::string text = "cannot sample server " + server + ": " + st.ToString();
  if (st.code() == NINF_ERR_AUTH && st.message().find("TLS") == std::string::npos)
    text += "; it needs a key: give --key-file KEY (the calls use it too) or set NINF_KEY_FILE";
  else if (st.code() == NINF_ERR_CONNECT || st.code() == NINF_ERR_TIMEOUT)
    text += " (is it running, and listening there?)";
  return text + "; its utilization, load avg and jobs show '-' while it does not answer";
}

void Sampler::Sample(double t0, std::map<std::string, std::vector<ServerSample>> *samples) {
  for (std::size_t i = 0; i < c_.sampled.size(); ++i) {
    const std::string &server = c_.sampled[i];
    ServerSample sample;
    std::string text;
    const Status st = Query(server, c_, &text);
    if (st.ok()) {
      sample = ParseSample(text, 0);
      failing_.erase(server);
    } else if (failing_.insert(server).second) {
      progress_->Note(SamplingFailure(server, st));
    }
    // Stamped when the group's counter is read: the measurement's own time.
    sample.at = Now() - t0;
    if (const CgroupSource *group = CgroupOf(groups_, i)) {
      if (std::optional<double> cpu = CgroupCpuSeconds(*group)) {
        sample.cpu_seconds = *cpu;
        sample.cpu_count = group->cpus;
        sample.cgroup = group->dir;
      }
    }
    if (sample.has_stats || sample.cpu_seconds >= 0) (*samples)[server].push_back(sample);
  }
}

}  // namespace ninf::loadtest
