#include "server/blas_core.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ninf::server {
namespace {

// The instruction set each kernel of OpenBLAS's x86-64 DYNAMIC_ARCH table
// needs, as a level: 0 SSE only, 1 AVX, 2 AVX2 with FMA, 3 AVX-512. Names
// as openblas_get_corename() prints them. A name not listed is unknown.
struct CoreLevel {
  std::string_view name;
  int level;
};
constexpr auto kCores = std::to_array<CoreLevel>({
    {"Katmai", 0},       {"Coppermine", 0},  {"Northwood", 0},
    {"Prescott", 0},     {"Banias", 0},      {"Atom", 0},
    {"Core2", 0},        {"Penryn", 0},      {"Dunnington", 0},
    {"Nehalem", 0},      {"Athlon", 0},      {"Opteron", 0},
    {"Opteron_SSE3", 0}, {"Barcelona", 0},   {"Nano", 0},
    {"Bobcat", 0},       {"Sandybridge", 1}, {"Bulldozer", 1},
    {"Piledriver", 1},   {"Steamroller", 1}, {"Excavator", 1},
    {"Haswell", 2},      {"Zen", 2},         {"SkylakeX", 3},
    {"Cooperlake", 3},   {"CooperLake", 3},  {"SapphireRapids", 3},
});

int LevelOf(std::string_view core) {
  for (const CoreLevel &c : kCores)
    if (c.name == core) return c.level;
  return -1;
}

int LevelOf(CpuIsa cpu) { return cpu.avx512 ? 3 : cpu.avx2_fma ? 2 : cpu.avx ? 1 : 0; }

}  // namespace

CpuIsa HostIsa() {
  __builtin_cpu_init();
  CpuIsa cpu;
  cpu.avx = __builtin_cpu_supports("avx");
  cpu.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
  return cpu;
}

std::string DetectedOpenblasCore() {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return "";
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return "";
  }
  if (child == 0) {
    // One thread: the library starts its pool when it is loaded.
    ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
    ::unsetenv("OPENBLAS_CORETYPE");
    void *lib = ::dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    auto corename =
        lib ? reinterpret_cast<char *(*)()>(::dlsym(lib, "openblas_get_corename")) : nullptr;
    if (corename) {
      const char *name = corename();
      if (name) (void)!::write(out[1], name, std::strlen(name));
    }
    ::_exit(0);  // no destructors, no exit handlers of the daemon's
  }
  ::close(out[1]);
  std::string name;
  char buf[64];
  pollfd p{out[0], POLLIN, 0};
  // Loading takes milliseconds; a child stuck for 5 s is given up.
  while (name.size() < 64 && ::poll(&p, 1, 5000) == 1) {
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    name.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  ::kill(child, SIGKILL);  // gone already, unless it hung
  while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  return name;
}

std::string PreferredOpenblasCore(std::string_view detected, CpuIsa cpu) {
  const int have = LevelOf(detected), can = LevelOf(cpu);
  if (have < 0 || have >= can) return "";
  switch (can) {
    case 3:
      return "SkylakeX";
    case 2:
      return "Haswell";
    case 1:
      return "Sandybridge";
    default:
      return "";
  }
}

}  // namespace ninf::server
