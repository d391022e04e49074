#include "daemon/descriptors.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace ninf::daemon {

void OpenStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0 && null != fd) {
      ::dup2(null, fd);
      ::close(null);
    }
  }
}

void MarkInheritedFdsCloseOnExec() {
  if (::close_range(3, ~0u, CLOSE_RANGE_CLOEXEC) == 0) return;
  // Kernels before 5.11: walk the open descriptors instead.
  if (DIR *dir = ::opendir("/proc/self/fd")) {
    int own = ::dirfd(dir);
    while (dirent *e = ::readdir(dir)) {
      int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != own) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
    }
    ::closedir(dir);
  }
}

void RaiseFdLimit(int64_t max_connections, int fds_per_connection) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &lim);
  }
  auto needed = static_cast<rlim_t>(fds_per_connection * max_connections + 64);
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < needed)
    spdlog::warn("event=fd_limit limit={} max_connections={} needed={}", lim.rlim_cur,
                 max_connections, needed);
}

}  // namespace ninf::daemon
