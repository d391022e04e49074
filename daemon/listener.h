// A listening socket, polled by libuv (uv_poll_t, not uv_tcp_t: client
// sockets are raw non-blocking fds that ninfd reads frame by frame and then
// hands to executables, which libuv's stream reader would read ahead of):
// TCP, or the Unix-domain socket of the same-host path, which speaks the
// same protocol.
#pragma once

#include <uv.h>

#include <functional>
#include <string>

#include "daemon/unique_fd.h"
#include "protocol/status.h"

namespace ninf::daemon {

// Writes "PORT\n" into `path` under a temporary name and renames it, so that
// a watcher (a test, a script waiting for --port 0) never reads a half-written
// number. An empty `path` (the ready_file setting unset) writes nothing.
// Errors: NINF_ERR_SERVER with the reason.
Status WritePortFile(const std::string &path, int port);

// A listening TCP socket (non-blocking, close-on-exec, SO_REUSEADDR, never
// SO_REUSEPORT: a second daemon given the same port fails here) bound to
// host:port (port 0: any free one). `*address` gets "host:port" as bound,
// `*port` the port. Errors: NINF_ERR_SERVER naming the address and the
// reason ("cannot listen on 127.0.0.1:9464: Address already in use").
Status ListenTcp(const std::string &host, int port, UniqueFd *fd, std::string *address,
                 int *bound_port);

class Listener {
 public:
  // Called for each accepted connection with its fd (non-blocking,
  // close-on-exec, TCP_NODELAY) and the peer's address ("unix:uid=U:PID"
  // on the Unix-domain socket: the uid is the client's address there).
  using AcceptFn = std::function<void(UniqueFd fd, const std::string &peer)>;

  Listener(uv_loop_t *loop, AcceptFn on_accept);
  ~Listener();
  Listener(const Listener &) = delete;
  Listener &operator=(const Listener &) = delete;

  // Binds host:port (port 0: any free port) and starts accepting.
  // Errors: NINF_ERR_SERVER with the reason (address in use, bad host).
  Status Start(const std::string &host, int port);

  // Binds the Unix-domain socket `path` (mode 0666: loopback TCP is open to
  // every local user too; a key_file protects both) and starts accepting.
  // A socket file nobody listens on (a daemon that was killed) is replaced;
  // one in use is an error. Close() removes the file.
  Status StartUnix(const std::string &path);

  // Stops accepting and closes the socket; safe to call twice. The object
  // must stay alive until the loop has run the close callbacks.
  void Close();

  // While paused the listener accepts nothing (the kernel backlog holds new
  // connections); used when the fd limit is reached.
  void Pause(uint64_t ms);

  int port() const { return port_; }
  const std::string &address() const { return address_; }

 private:
  static void OnReadable(uv_poll_t *handle, int status, int events);
  static void OnResume(uv_timer_t *timer);
  void AcceptAll();
  Status Watch();

  uv_loop_t *loop_;
  AcceptFn on_accept_;
  uv_poll_t poll_{};
  uv_timer_t resume_{};
  UniqueFd fd_;
  int port_ = 0;
  std::string address_;
  std::string unix_path_;  // set for a Unix-domain listener
  bool started_ = false;
  bool closed_ = false;
};

}  // namespace ninf::daemon
