#include "idl/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char **environ;

namespace ninf::idl {
namespace {

Status SystemError(const std::string &what) {
  return Status(NINF_ERR_INTERNAL, what + ": " + std::strerror(errno));
}

// Owns the two ends of a pipe and the spawn attributes; frees them however
// RunProgram leaves.
struct SpawnResources {
  int fds[2] = {-1, -1};
  posix_spawn_file_actions_t actions;
  bool actions_ready = false;
  ~SpawnResources() {
    for (int fd : fds)
      if (fd >= 0) close(fd);
    if (actions_ready) posix_spawn_file_actions_destroy(&actions);
  }
};

}  // namespace

Status RunProgram(const std::vector<std::string> &argv, std::string *captured, int *exit_code,
                  bool with_stderr) {
  if (argv.empty()) return Status(NINF_ERR_INTERNAL, "empty command");
  if (with_stderr && !captured) return Status(NINF_ERR_INTERNAL, "stderr captured nowhere");
  std::vector<char *> cargv;
  for (const std::string &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);

  SpawnResources res;
  if (posix_spawn_file_actions_init(&res.actions) != 0) return SystemError("posix_spawn");
  res.actions_ready = true;
  if (captured) {
    if (pipe2(res.fds, O_CLOEXEC) != 0) return SystemError("pipe");
    posix_spawn_file_actions_adddup2(&res.actions, res.fds[1], STDOUT_FILENO);
    if (with_stderr) posix_spawn_file_actions_adddup2(&res.actions, res.fds[1], STDERR_FILENO);
  }
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, cargv[0], &res.actions, nullptr, cargv.data(), environ);
  if (rc != 0)
    return Status(NINF_ERR_NOT_SUPPORTED, "cannot run '" + argv[0] + "': " + std::strerror(rc));
  if (captured) {
    close(res.fds[1]);
    res.fds[1] = -1;
    char buf[65536];
    // A compiler's messages are kept up to a bound (a broken file can make
    // megabytes of them) and the rest drained, so the program never blocks
    // on a full pipe; cpp's output, which is the input, is kept whole.
    constexpr std::size_t kMaxMessages = std::size_t{1} << 20;
    std::size_t dropped = 0;
    for (;;) {
      ssize_t n = read(res.fds[0], buf, sizeof buf);
      if (n > 0) {
        std::size_t keep = static_cast<std::size_t>(n);
        if (with_stderr)
          keep = std::min(keep, kMaxMessages - std::min(kMaxMessages, captured->size()));
        captured->append(buf, keep);
        dropped += static_cast<std::size_t>(n) - keep;
      } else if (n == 0) {
        if (dropped)
          captured->append("\n[" + std::to_string(dropped) + " more bytes of output not shown]\n");
        break;
      } else if (errno != EINTR) {
        Status err = SystemError("reading the output of " + argv[0]);
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        return err;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return SystemError("waitpid");
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return Status::Ok();
}

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
    } else if (c == '\'' || c == '"') {
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (c == '"' && text[i] == '\\' && i + 1 < text.size()) ++i;
        word += text[i];
      }
    } else {
      word += c;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::string CommandLine(const std::vector<std::string> &argv) {
  std::string line;
  for (const std::string &a : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !a.empty() && a.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789-_./=+,:@%") == std::string::npos;
    if (plain) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

}  // namespace ninf::idl
