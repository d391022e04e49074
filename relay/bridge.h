// One bridge of ninf-relay: a client's socket and the data connection a
// reverse ninfd dialed for it, joined so that every byte one end sends
// reaches the other. The bytes move with splice(2) through a pipe per
// direction: socket -> pipe -> socket, never through user space, so the
// relay cannot read them (and once TLS runs end to end, could not make
// sense of them either). Builds on libuv (uv_poll_t on the raw sockets).
//
// Each direction: read into its pipe while the pipe has room, write out of
// it while the other socket takes bytes; a full pipe stops reading that
// side (back pressure reaches the sender through TCP). An end's EOF is
// passed on as shutdown(SHUT_WR) once its pipe is empty; the bridge closes
// when both directions have ended, or at once on an error (a reset).
// Single-threaded, on the relay's loop.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "daemon/unique_fd.h"
#include "protocol/status.h"

namespace ninf::relay {

class Bridge {
 public:
  // Called once, after both sockets are closed and the handles released:
  // the owner frees the bridge from here. `why` is empty when both ends
  // closed cleanly.
  using ClosedFn = std::function<void(Bridge &bridge, const std::string &why)>;

  // Takes both sockets (non-blocking) and starts moving bytes. Errors
  // (pipes or handles that cannot be made): NINF_ERR_SERVER; the sockets
  // are closed then and `closed` is never called.
  static Status Open(uv_loop_t *loop, daemon::UniqueFd client, daemon::UniqueFd server,
                     ClosedFn closed, std::unique_ptr<Bridge> *out);
  ~Bridge();
  Bridge(const Bridge &) = delete;
  Bridge &operator=(const Bridge &) = delete;

  // Closes both sockets now (relay shutdown, the server's registration
  // gone); `closed` follows once the handles are released.
  void Close(const std::string &why);

  uint64_t bytes_to_server() const { return dirs_[0].moved; }
  uint64_t bytes_to_client() const { return dirs_[1].moved; }

 private:
  // One direction: from end `from` to end `to` through `pipe`.
  struct Direction {
    int from = 0, to = 0;  // indexes into ends_
    daemon::UniqueFd pipe_read, pipe_write;
    std::size_t in_pipe = 0;  // bytes in the pipe not yet written out
    std::size_t capacity = 0;
    bool eof = false;   // `from` sent FIN
    bool done = false;  // FIN passed on to `to`
    uint64_t moved = 0;
  };
  struct End {
    daemon::UniqueFd fd;
    uv_poll_t poll{};
    int watched = -1;  // events uv_poll watches now (-1: not started)
  };

  explicit Bridge(uv_loop_t *loop) : loop_(loop) {}
  static void OnPoll(uv_poll_t *handle, int status, int events);
  static void OnHandleClosed(uv_handle_t *handle);
  // Moves what can be moved now in `d`; an error string when an end failed.
  std::string Pump(Direction &d);
  void PumpAll();
  void UpdatePolls();

  uv_loop_t *loop_;
  End ends_[2];        // 0: the client, 1: the server
  Direction dirs_[2];  // 0: client -> server, 1: server -> client
  ClosedFn closed_;
  std::string why_;
  bool closing_ = false;
  int open_handles_ = 0;
};

}  // namespace ninf::relay
