// The cancellation of one call, which may come before the call has a
// connection: grpc_cancel right after grpc_call_async races the session
// thread that is still connecting. The token remembers the cancel, and the
// call checks it once its socket exists, so no cancel is lost; a cancel that
// finds the socket shuts it down, which makes ninfd kill the executable.
// Thread-safe.
#pragma once

#include <sys/socket.h>

#include <mutex>

namespace ninf::client {

class CancelToken {
 public:
  // From any thread: the call is to end now, or as soon as it starts.
  void Cancel() {
    std::lock_guard<std::mutex> lock(mutex_);
    cancelled_ = true;
    if (fd_ >= 0) (void)::shutdown(fd_, SHUT_RDWR);  // the call sees a broken connection
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
