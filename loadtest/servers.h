// What the load test asks the servers itself, beside the clients' calls:
// whether each answers before the run starts, and every --sample-ms their
// statistics (ninfd --status) and their control groups' CPU time.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "loadtest/cgroup.h"
#include "loadtest/progress.h"
#include "loadtest/report.h"
#include "protocol/status.h"

namespace ninf::loadtest {

struct RunConfig;

// Seconds on the monotonic clock: the time base of a run and its samples.
double Now();

// The control groups of c.server_cgroups (one per sampled server, or one for
// all). False with a message for a wrong count or a group that cannot be read.
bool OpenCgroups(const RunConfig &c, std::vector<CgroupSource> *groups, std::string *error);

// Whether every server the clients call (each --server, or the metaserver)
// answers, from where the clients run: with --netns from inside each
// namespace (a child process enters it). A server that answers and refuses
// our key still answers. False with "server X unreachable ..." for the first
// that does not.
bool CheckServers(const RunConfig &c, const std::vector<int> &netns_fds, std::string *error);

// Why a statistics query of `server` failed and what fixes it. Pure.
std::string SamplingFailure(const std::string &server, const Status &st);

class Sampler {
 public:
  Sampler(const RunConfig &c, const std::vector<CgroupSource> &groups, Progress *progress)
      : c_(c), groups_(groups), progress_(progress) {}
  // One sample of every sampled server, stamped in seconds since t0, into
  // samples[server]. A failed query is a note once (again only after the
  // server answered in between), and the sample keeps the group's CPU time.
  void Sample(double t0, std::map<std::string, std::vector<ServerSample>> *samples);

 private:
  const RunConfig &c_;
  const std::vector<CgroupSource> &groups_;
  Progress *progress_;
  std::set<std::string> failing_;
};

}  // namespace ninf::loadtest
