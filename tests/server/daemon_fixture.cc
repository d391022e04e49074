#include "tests/server/daemon_fixture.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "protocol/address.h"
#include "protocol/wire.h"

extern char **environ;

#ifndef NINFD_PATH
#define NINFD_PATH "ninfd"
#endif

namespace ninf::test {
namespace {

using namespace std::chrono_literals;

// State letter and parent pid from /proc/<pid>/stat ("pid (comm) S ppid
// ..."); the command name may hold spaces and parentheses, so parsing
// starts after the last ')'.
bool ReadStat(pid_t pid, char *state, pid_t *ppid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  std::size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  return static_cast<bool>(rest >> *state >> *ppid);
}

// Children from /proc/<pid>/task/*/children when the kernel has them
// (CONFIG_PROC_CHILDREN); otherwise by scanning every process's parent.
std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  std::string task_dir = "/proc/" + std::to_string(parent) + "/task";
  bool have_children_files = false;
  for (const auto &task : std::filesystem::directory_iterator(task_dir, ec)) {
    std::ifstream in(task.path() / "children");
    if (!in) continue;
    have_children_files = true;
    for (pid_t p; in >> p;) out.push_back(p);
  }
  if (have_children_files) return out;
  for (const auto &entry : std::filesystem::directory_iterator("/proc", ec)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::stol(name));
    char state = 0;
    pid_t ppid = 0;
    if (ReadStat(pid, &state, &ppid) && ppid == parent) out.push_back(pid);
  }
  return out;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

TempDir::TempDir() {
  const char *base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/ninf-test-XXXXXX";
  if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void TempDir::WriteFile(const std::string &name, const std::string &text, bool executable) const {
  std::string path = Join(name);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  ::chmod(path.c_str(), executable ? 0755 : 0644);
}

std::string NinfdPath() {
  const char *env = std::getenv("NINFD");
  return env && *env ? env : NINFD_PATH;
}

Daemon::Daemon(std::vector<std::string> args, std::vector<std::string> env,
               const std::string &log_file, const std::string &program) {
  if (const char *server = std::getenv("NINF_TEST_SERVER"); program.empty() && server && *server) {
    HostPort target;
    if (Status st = ParseHostPort(server, HostPort{"127.0.0.1", 0}, &target); !st.ok())
      throw std::runtime_error("NINF_TEST_SERVER: " + st.message());
    host_ = target.host;
    port_ = target.port;
    return;
  }
  std::string ready = dir_.Join("ready");
  std::vector<std::string> argv_s = {program.empty() ? NinfdPath() : program, "--ready-file",
                                     ready};
  if (std::find(args.begin(), args.end(), "--port") == args.end())
    argv_s.insert(argv_s.end(), {"--port", "0"});
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char **e = environ; *e; ++e) env_s.emplace_back(*e);
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char *> envp;
  for (std::string &e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_file.empty())
    posix_spawn_file_actions_addopen(&actions, 2, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
  int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv_s[0] + ": " + std::strerror(rc));
  }
  WaitReady(ready);
}

void Daemon::WaitReady(const std::string &ready_file) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(ready_file);
    std::string text;
    if (in && std::getline(in, text) && !text.empty()) {
      port_ = std::stoi(text);
      return;
    }
    if (!Running())
      throw std::runtime_error("ninfd exited with status " + std::to_string(exit_code_) +
                               " before it was ready (see its log above)");
    std::this_thread::sleep_for(10ms);
  }
  Stop(2000);
  throw std::runtime_error("ninfd did not become ready within 10 s");
}

Daemon::~Daemon() {
  if (!external() && !exited_) Stop();
}

int Daemon::Connect() const {
  int fd = -1;
  Status st = ConnectTcp(host_, port_, 5000, &fd);
  if (!st.ok()) throw std::runtime_error("cannot connect to ninfd: " + st.ToString());
  return fd;
}

bool Daemon::Running() {
  if (external()) return true;
  if (exited_) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    exit_code_ = DecodeWaitStatus(status);
  }
  return !exited_;
}

void Daemon::Signal(int signum) const {
  if (!external()) ::kill(pid_, signum);
}

int Daemon::Stop(int timeout_ms) {
  if (external()) return 0;
  if (exited_) return exit_code_;
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Running()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      exited_ = true;
      exit_code_ = -1;
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  return exit_code_;
}

std::vector<pid_t> Daemon::Children() const {
  if (external()) return {};
  return ChildrenOf(pid_);
}

std::vector<pid_t> Daemon::ZombieChildren() const {
  std::vector<pid_t> out;
  for (pid_t child : Children()) {
    char state = 0;
    pid_t ppid = 0;
    if (ReadStat(child, &state, &ppid) && state == 'Z') out.push_back(child);
  }
  return out;
}

bool Daemon::WaitNoZombies(int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!ZombieChildren().empty()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

bool Daemon::WaitNoChildren(int timeout_ms) const { return WaitChildren(0, timeout_ms); }

bool Daemon::WaitChildren(std::size_t count, int timeout_ms) const {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Children().size() != count || !ZombieChildren().empty()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

}  // namespace ninf::test
