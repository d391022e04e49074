#include "loadtest/cgroup.h"

#include <fstream>
#include <sstream>

namespace ninf::loadtest {
namespace {

bool ReadFile(const std::string &path, std::string *text) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream all;
  all << in.rdbuf();
  *text = all.str();
  return true;
}

bool Exists(const std::string &path) { return std::ifstream(path).good(); }

// The v1 cpuset directory of a cpuacct directory: the path component that
// names the cpuacct hierarchy ("cpuacct", "cpu,cpuacct") becomes "cpuset".
std::string CpusetDirOf(const std::string &dir) {
  std::string out, part;
  std::istringstream in(dir);
  bool replaced = false;
  while (std::getline(in, part, '/')) {
    if (!replaced && ("," + part + ",").find(",cpuacct,") != std::string::npos) {
      part = "cpuset";
      replaced = true;
    }
    out += part + "/";
  }
  if (!replaced) return {};
  out.pop_back();
  return out;
}

int CpusFromFile(const std::string &path) {
  std::string text;
  return ReadFile(path, &text) ? CountCpuList(text) : 0;
}

}  // namespace

std::optional<double> ParseCpuStatUsec(const std::string &text) {
  std::istringstream in(text);
  std::string name;
  double value = 0;
  while (in >> name >> value)
    if (name == "usage_usec") return value;
  return std::nullopt;
}

std::optional<double> ParseCpuacctNs(const std::string &text) {
  std::istringstream in(text);
  double value = 0;
  if (in >> value && value >= 0) return value;
  return std::nullopt;
}

int CountCpuList(const std::string &list) {
  int n = 0;
  std::istringstream in(list);
  std::string part;
  while (std::getline(in, part, ',')) {
    while (!part.empty() && (part.back() == '\n' || part.back() == ' ')) part.pop_back();
    if (part.empty()) continue;
    try {
      const std::size_t dash = part.find('-');
      if (dash == std::string::npos) {
        (void)std::stoi(part);
        ++n;
        continue;
      }
      const int lo = std::stoi(part.substr(0, dash)), hi = std::stoi(part.substr(dash + 1));
      if (hi < lo) return 0;
      n += hi - lo + 1;
    } catch (const std::exception &) {
      return 0;
    }
  }
  return n;
}

bool OpenCgroup(const std::string &dir, int cpus, CgroupSource *out, std::string *error) {
  CgroupSource s;
  s.dir = dir;
  std::string cpus_from;
  // v1's cpu hierarchy has a cpu.stat too, without usage_usec.
  std::string stat;
  if (ReadFile(dir + "/cpu.stat", &stat) && ParseCpuStatUsec(stat)) {
    s.v2 = true;
    s.usage_file = dir + "/cpu.stat";
    cpus_from = dir + "/cpuset.cpus.effective";
  } else if (Exists(dir + "/cpuacct.usage")) {
    s.v2 = false;
    s.usage_file = dir + "/cpuacct.usage";
    const std::string cpuset = CpusetDirOf(dir);
    if (!cpuset.empty()) cpus_from = cpuset + "/cpuset.cpus";
  } else {
    *error = "control group " + dir +
             ": neither cpu.stat with usage_usec (cgroup v2) nor cpuacct.usage (v1, the "
             "group's directory in the cpuacct hierarchy)";
    return false;
  }
  s.cpus = cpus > 0 ? cpus : (cpus_from.empty() ? 0 : CpusFromFile(cpus_from));
  if (s.cpus <= 0) {
    *error = "control group " + dir + ": cannot tell its CPUs from " +
             (cpus_from.empty() ? std::string("a matching cpuset directory") : cpus_from) +
             "; give --server-cpus N";
    return false;
  }
  if (!CgroupCpuSeconds(s)) {
    *error = "control group " + dir + ": cannot read " + s.usage_file;
    return false;
  }
  *out = s;
  return true;
}

std::optional<double> CgroupCpuSeconds(const CgroupSource &s) {
  std::string text;
  if (!ReadFile(s.usage_file, &text)) return std::nullopt;
  if (s.v2) {
    const std::optional<double> usec = ParseCpuStatUsec(text);
    if (!usec) return std::nullopt;
    return *usec / 1e6;
  }
  const std::optional<double> ns = ParseCpuacctNs(text);
  if (!ns) return std::nullopt;
  return *ns / 1e9;
}

}  // namespace ninf::loadtest
