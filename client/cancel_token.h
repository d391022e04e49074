// The cancellation of one call, which may come before the call has a
// connection: grpc_cancel right after grpc_call_async races the session
// thread that is still connecting. The token remembers the cancel, and the
// call checks it once its socket exists, so no cancel is lost; a cancel that
// finds the socket aborts it, which makes ninfd kill the executable.
// Thread-safe.
#pragma once

#include <sys/socket.h>

#include <mutex>

namespace ninf::client {

// Ends a connection so that the server learns it at once: the close that
// follows sends a reset (SO_LINGER 0), which ninfd takes as the client gone,
// where a plain close could be a half-close. The shutdown wakes the call's
// thread, which sees a broken connection.
inline void AbortConnection(int fd) {
  linger abort{1, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  (void)::shutdown(fd, SHUT_RDWR);
}

class CancelToken {
 public:
  // From any thread: the call is to end now, or as soon as it starts.
  void Cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    if (fd_ >= 0) AbortConnection(fd_);
  }

  // The call's thread, once it has its socket: false if the call was
  // cancelled already (then the call must not start).
  bool Attach(int fd) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancelled_) return false;
    fd_ = fd;
    return true;
  }

  // The call's thread, before the socket may be closed or reused.
  void Detach() {
    std::lock_guard<std::mutex> lock(mutex_);
    fd_ = -1;
  }

 private:
  std::mutex mutex_;
  bool cancelled_ = false;
  int fd_ = -1;
};

}  // namespace ninf::client
