// A server's measured CPU time, read from the control group it runs in
// (--server-cgroup): what "utilization" means in the seed paper's tables
// (004, Fig. 5: the server's CPU busy), where ninfd's own busy_core_seconds
// is booked routine time x granted threads and misses transfer, data
// handling and oversubscription. bench/cgroup.sh makes such groups.
//
//   cgroup v2  DIR/cpu.stat, line usage_usec; CPUs from DIR/cpuset.cpus.effective
//   cgroup v1  DIR/cpuacct.usage (ns), DIR in the cpuacct hierarchy; CPUs from
//              the same group's cpuset dir (the hierarchy's directory named
//              cpuset instead of cpuacct or cpu,cpuacct), cpuset.cpus
// A count given by --server-cpus wins over both.
#pragma once

#include <optional>
#include <string>

namespace ninf::loadtest {

struct CgroupSource {
  std::string dir;
  std::string usage_file;  // cpu.stat (v2) or cpuacct.usage (v1)
  bool v2 = true;
  int cpus = 1;  // the CPUs its processes may use
};

// Finds the usage file and the CPU count of `dir`; `cpus` > 0 is given
// (--server-cpus) and not looked up. False with a message naming the
// missing file or the option that would supply it.
bool OpenCgroup(const std::string &dir, int cpus, CgroupSource *out, std::string *error);

// The group's CPU time so far, in seconds; nullopt when the file cannot be
// read or parsed (a removed group).
std::optional<double> CgroupCpuSeconds(const CgroupSource &source);

// Pure parsers, unit-tested: usage_usec of a cpu.stat text (v2), the
// nanoseconds of a cpuacct.usage text (v1), and the number of CPUs in a
// cpuset list ("0-3,6" is 5; 0 for an empty or malformed list).
std::optional<double> ParseCpuStatUsec(const std::string &text);
std::optional<double> ParseCpuacctNs(const std::string &text);
int CountCpuList(const std::string &list);

}  // namespace ninf::loadtest
