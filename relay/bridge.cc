#include "relay/bridge.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ninf::relay {
namespace {

// A pipe of 1 MiB per direction (the default largest an unprivileged
// process may ask for, /proc/sys/fs/pipe-max-size): fewer wake-ups per
// byte than the default 64 KiB. A smaller pipe still works.
constexpr int kPipeBytes = 1 << 20;
// Splices per direction and wake-up, so that one busy bridge cannot keep
// the loop from the others (each moves up to a pipe's worth).
constexpr int kRoundsPerWakeup = 16;

constexpr unsigned kSpliceFlags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;

bool WouldBlock(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

// What failed on an end whose poll reported `status`. libuv reports a
// socket's POLLERR as UV_EBADF ("bad file descriptor", which it is not):
// the socket's own pending error says what happened, a reset mostly.
std::string EndError(int fd, const char *who, int status) {
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err != 0)
    return std::string("the ") + who + "'s connection: " + std::strerror(err);
  return std::string("the ") + who + "'s connection: " +
         (status == UV_EBADF ? "an error the socket did not name" : uv_strerror(status));
}

}  // namespace

Status Bridge::Open(uv_loop_t *loop, daemon::UniqueFd client, daemon::UniqueFd server,
                    ClosedFn closed, std::unique_ptr<Bridge> *out) {
  std::unique_ptr<Bridge> b(new Bridge(loop));
  b->ends_[0].fd = std::move(client);
  b->ends_[1].fd = std::move(server);
  for (int i = 0; i < 2; ++i) {
    Direction &d = b->dirs_[i];
    d.from = i;
    d.to = 1 - i;
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
      return Status(NINF_ERR_SERVER, std::string("cannot make a pipe: ") + std::strerror(errno));
    d.pipe_read.reset(p[0]);
    d.pipe_write.reset(p[1]);
    (void)::fcntl(p[1], F_SETPIPE_SZ, kPipeBytes);  // best effort, see kPipeBytes
    const int size = ::fcntl(p[1], F_GETPIPE_SZ);
    d.capacity = size > 0 ? static_cast<std::size_t>(size) : 65536;
  }
  for (End &e : b->ends_) {
    if (int rc = uv_poll_init(loop, &e.poll, e.fd.get()); rc != 0) {
      // The handles already started must be closed through the loop; the
      // object then cannot be freed here. None is: init of the first fails
      // before any, and the second's failure closes the first below.
      if (&e == &b->ends_[1]) {
        b->closed_ = [](Bridge &, const std::string &) {};
        Bridge *raw = b.release();
        raw->open_handles_ = 1;
        raw->closing_ = true;
        raw->ends_[0].poll.data = raw;
        uv_close(reinterpret_cast<uv_handle_t *>(&raw->ends_[0].poll),
                 [](uv_handle_t *h) { delete static_cast<Bridge *>(h->data); });
      }
      return Status(NINF_ERR_SERVER, std::string("cannot watch a socket: ") + uv_strerror(rc));
    }
    e.poll.data = b.get();
    ++b->open_handles_;
  }
  b->closed_ = std::move(closed);
  b->PumpAll();  // bytes may already wait (the client's first request)
  if (!b->closing_) b->UpdatePolls();
  *out = std::move(b);
  return Status::Ok();
}

Bridge::~Bridge() = default;

std::string Bridge::Pump(Direction &d) {
  const int from = ends_[d.from].fd.get(), to = ends_[d.to].fd.get();
  for (int round = 0; round < kRoundsPerWakeup && !d.done; ++round) {
    bool progressed = false;
    if (d.in_pipe > 0) {
      ssize_t n = ::splice(d.pipe_read.get(), nullptr, to, nullptr, d.in_pipe, kSpliceFlags);
      if (n > 0) {
        d.in_pipe -= static_cast<std::size_t>(n);
        d.moved += static_cast<uint64_t>(n);
        progressed = true;
      } else if (n < 0 && errno != EINTR && !WouldBlock(errno)) {
        return std::string("writing to the ") + (d.to == 0 ? "client" : "server") + ": " +
               std::strerror(errno);
      }
    }
    if (d.eof && d.in_pipe == 0) {
      (void)::shutdown(to, SHUT_WR);  // the peer may be gone already
      d.done = true;
      break;
    }
    if (!d.eof && d.in_pipe < d.capacity) {
      ssize_t n = ::splice(from, nullptr, d.pipe_write.get(), nullptr, d.capacity - d.in_pipe,
                           kSpliceFlags);
      if (n > 0) {
        d.in_pipe += static_cast<std::size_t>(n);
        progressed = true;
      } else if (n == 0) {
        d.eof = true;
        progressed = true;
      } else if (errno != EINTR && !WouldBlock(errno)) {
        return std::string("reading from the ") + (d.from == 0 ? "client" : "server") + ": " +
               std::strerror(errno);
      }
    }
    if (!progressed) break;
  }
  return {};
}

void Bridge::PumpAll() {
  for (Direction &d : dirs_) {
    if (std::string why = Pump(d); !why.empty()) {
      Close(why);
      return;
    }
  }
  if (dirs_[0].done && dirs_[1].done) Close("");
}

void Bridge::UpdatePolls() {
  for (int i = 0; i < 2; ++i) {
    const Direction &out = dirs_[i];     // reads from end i
    const Direction &in = dirs_[1 - i];  // writes to end i
    int events = 0;
    if (!out.eof && out.in_pipe < out.capacity) events |= UV_READABLE;
    if (in.in_pipe > 0) events |= UV_WRITABLE;
    // Not UV_DISCONNECT: after an end's EOF it would stay raised and wake
    // the loop for nothing. A reset shows when the end is next read or
    // written.
    End &e = ends_[i];
    if (events == e.watched) continue;
    if (int rc = uv_poll_start(&e.poll, events, OnPoll); rc != 0) {
      Close(std::string("cannot watch a socket: ") + uv_strerror(rc));
      return;
    }
    e.watched = events;
  }
}

void Bridge::OnPoll(uv_poll_t *handle, int status, int /*events*/) {
  auto *self = static_cast<Bridge *>(handle->data);
  if (self->closing_) return;
  if (status < 0) {
    const int end = handle == &self->ends_[0].poll ? 0 : 1;
    self->Close(EndError(self->ends_[end].fd.get(), end == 0 ? "client" : "server", status));
    return;
  }
  // Readable or writable, either end: pumping both directions does what
  // can be done now and no more (every splice is non-blocking).
  self->PumpAll();
  if (!self->closing_) self->UpdatePolls();
}

void Bridge::Close(const std::string &why) {
  if (closing_) return;
  closing_ = true;
  why_ = why;
  for (End &e : ends_) uv_close(reinterpret_cast<uv_handle_t *>(&e.poll), OnHandleClosed);
}

void Bridge::OnHandleClosed(uv_handle_t *handle) {
  auto *self = static_cast<Bridge *>(handle->data);
  if (--self->open_handles_ > 0) return;
  // Only now may the sockets close: libuv has stopped watching them.
  for (End &e : self->ends_) e.fd.reset();
  self->closed_(*self, self->why_);  // may free the bridge
}

}  // namespace ninf::relay
