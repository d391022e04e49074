#include "protocol/wire.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "ninf.pb.h"
#include "protocol/fd_passing.h"
#include "protocol/interrupt.h"

namespace ninf {
namespace {

constexpr int kIovBatch = 64;

// Over TLS, payload pieces below this are gathered with the headers into
// one SSL_write (one record, one send) rather than a record each; larger
// ones are encrypted straight from the caller's memory.
constexpr std::size_t kTlsGather = 16 * 1024;
// A TLS 1.3 record's plaintext and what framing each record adds (header,
// content type, AEAD tag).
constexpr uint64_t kTlsMaxRecord = 16 * 1024;
constexpr uint64_t kTlsRecordOverhead = 22;

Status IoError(const char *what, int err) {
  if (err == 0)
    return Status(NINF_ERR_COMMUNICATION, std::string("peer closed the connection during ") + what);
  return Status(NINF_ERR_COMMUNICATION, std::string(what) + ": " + std::strerror(err));
}

// Advances an iovec array past `n` consumed bytes.
void Consume(std::vector<iovec> &iov, std::size_t &first, std::size_t n) {
  while (n > 0 && first < iov.size()) {
    std::size_t take = std::min(n, iov[first].iov_len);
    iov[first].iov_base = static_cast<char *>(iov[first].iov_base) + take;
    iov[first].iov_len -= take;
    n -= take;
    if (iov[first].iov_len == 0) ++first;
  }
  while (first < iov.size() && iov[first].iov_len == 0) ++first;
}

// Ends the connection so that the peer learns it at once, as a reset where
// a plain close could read as a half-close: a TCP socket is disconnected
// (connect to AF_UNSPEC sends the reset now, and every later read or write
// of ours fails); where that does not apply (a Unix-domain socket, whose
// peer sees the end at once anyway) a shutdown fails our later I/O, and
// SO_LINGER 0 makes the close that follows a reset if anything is unsent.
// (A shutdown of a TCP socket would send a FIN first: the peer would read
// an end of stream before the reset.)
void AbortSocket(int fd) {
  linger abort{1, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
  sockaddr unspec{};
  unspec.sa_family = AF_UNSPEC;
  if (::connect(fd, &unspec, sizeof unspec) != 0) (void)::shutdown(fd, SHUT_RDWR);
}

}  // namespace

Channel::Channel(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  local_ = ::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len) == 0 &&
           addr.ss_family == AF_UNIX;
}

Channel::~Channel() {
  ssl_.reset();  // before the socket it uses
  if (fd_ >= 0) ::close(fd_);
  if (received_fd_ >= 0) ::close(received_fd_);
}

Status Channel::Replace(int fd) {
  const bool ok = ::dup3(fd, fd_, O_CLOEXEC) >= 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return Status(NINF_ERR_INTERNAL, std::string("dup3: ") + std::strerror(err));
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  local_ = ::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len) == 0 &&
           addr.ss_family == AF_UNIX;
  if (received_fd_ >= 0) ::close(std::exchange(received_fd_, -1));
  ssl_.reset();  // the session was the old connection's
  return Status::Ok();
}

void Channel::UseTls(tls::SslPtr ssl) {
  // Freed, not shut down: no close_notify may follow on this socket.
  ssl_ = std::move(ssl);
  if (ssl_) {
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0 && !(flags & O_NONBLOCK)) (void)::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  }
}

Status Channel::TlsWait(int r, const char *what) {
  const int err = SSL_get_error(ssl_.get(), r);
  if (err == SSL_ERROR_WANT_READ) return WaitReady(POLLIN);
  if (err == SSL_ERROR_WANT_WRITE) return WaitReady(POLLOUT);
  if (err == SSL_ERROR_ZERO_RETURN) return IoError(what, 0);
  if (err == SSL_ERROR_SYSCALL) {
    const int e = errno;
    ERR_clear_error();
    return IoError(what, e == EAGAIN ? 0 : e);
  }
  std::string detail = tls::TakeErrors("TLS error");
  // TLS 1.3 lets the client finish its handshake before the server checks
  // the client's certificate: its refusal comes as the first read's alert.
  if (detail.find("certificate required") != std::string::npos)
    detail +=
        " (the server requires a client certificate: set tls_cert and tls_key, or "
        "NINF_TLS_CERT and NINF_TLS_KEY)";
  else if (detail.find("unknown ca") != std::string::npos ||
           detail.find("bad certificate") != std::string::npos)
    detail +=
        " (the server refused the client certificate: tls_cert must be signed by the "
        "server's tls_client_ca)";
  return Status(NINF_ERR_COMMUNICATION, std::string("TLS ") + what + ": " + detail);
}

Status Channel::TlsWrite(const void *data, std::size_t n) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ERR_clear_error();
    std::size_t written = 0;
    // Bounded so that a multi-GiB array still sees the timeout between steps.
    const std::size_t take = std::min<std::size_t>(n, std::size_t{1} << 30);
    const int r = SSL_write_ex(ssl_.get(), p, take, &written);
    if (r == 1) {
      p += written;
      n -= written;
      bytes_sent_ += written;
      continue;
    }
    NINF_RETURN_IF_ERROR(TlsWait(r, "send"));
  }
  return Status::Ok();
}

Status Channel::TlsRead(void *data, std::size_t n, ReceiveBeat *beat) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ERR_clear_error();
    std::size_t got = 0;
    const int r = SSL_read_ex(ssl_.get(), p, n, &got);
    if (r == 1) {
      p += got;
      n -= got;
      bytes_received_ += got;
      // Between whole records: a write here leaves no read half done.
      NINF_RETURN_IF_ERROR(BeatIfDue(beat));
      continue;
    }
    NINF_RETURN_IF_ERROR(TlsWait(r, "receive"));
  }
  return Status::Ok();
}

int Channel::TakeReceivedFd() { return std::exchange(received_fd_, -1); }

bool Channel::Arrived(uint64_t n) const {
  int queued = 0;
  if (::ioctl(fd_, FIONREAD, &queued) != 0 || queued < 0) return false;
  uint64_t have = static_cast<uint64_t>(queued);
  if (ssl_) {
    const uint64_t held = static_cast<uint64_t>(std::max(SSL_pending(ssl_.get()), 0));
    if (held >= n) return true;
    // What is still in the socket comes in records of at most 16 KiB,
    // each with its header, content type and tag (TLS 1.3: 22 bytes).
    const uint64_t rest = n - held;
    return have >= rest + kTlsRecordOverhead * (rest / kTlsMaxRecord + 1);
  }
  return have >= n;
}

// Every read and write is non-blocking (MSG_DONTWAIT) and waits here when
// the socket is not ready, so the timeout bounds each step: a blocking
// sendmsg of a whole array would otherwise sit in the kernel for as long as
// the peer does not read, whatever the timeout says. With an interrupt
// check set (interrupt.h) the wait is sliced, and an interrupt aborts the
// connection: the peer (ninfd, or the executable it handed the call to)
// sees a reset at once and ends the call.
Status Channel::WaitReady(short events) {
  int err = 0;
  switch (WaitFd(fd_, events, timeout_ms_, &err)) {
    case WaitResult::kReady:
      return Status::Ok();
    case WaitResult::kTimeout:
      return Status(NINF_ERR_TIMEOUT,
                    "no progress from the peer for " + std::to_string(timeout_ms_) + " ms");
    case WaitResult::kInterrupted:
      AbortSocket(fd_);
      return InterruptedStatus();
    case WaitResult::kError:
      break;
  }
  return IoError("poll", err);
}

Status Channel::SendFrame(FrameType type, const google::protobuf::MessageLite *msg,
                          std::span<const iovec> payload, int pass_fd) {
  std::string header_bytes;
  if (msg && !msg->SerializeToString(&header_bytes))
    return Status(NINF_ERR_INTERNAL, "cannot serialize frame header");
  FrameHeader h;
  h.type = type;
  h.header_length = static_cast<uint32_t>(header_bytes.size());
  for (const iovec &v : payload) h.payload_length += v.iov_len;
  uint8_t fixed[kFrameHeaderSize];
  EncodeFrameHeader(h, fixed);

  if (ssl_) {
    // The headers and small pieces go together; a large piece flushes what
    // was gathered and is encrypted from where it lies.
    std::string gathered(reinterpret_cast<const char *>(fixed), sizeof fixed);
    gathered += header_bytes;
    for (const iovec &v : payload) {
      if (v.iov_len < kTlsGather) {
        gathered.append(static_cast<const char *>(v.iov_base), v.iov_len);
        continue;
      }
      if (!gathered.empty()) NINF_RETURN_IF_ERROR(TlsWrite(gathered.data(), gathered.size()));
      gathered.clear();
      NINF_RETURN_IF_ERROR(TlsWrite(v.iov_base, v.iov_len));
    }
    if (!gathered.empty()) NINF_RETURN_IF_ERROR(TlsWrite(gathered.data(), gathered.size()));
    return Status::Ok();
  }

  std::vector<iovec> iov;
  iov.reserve(payload.size() + 2);
  iov.push_back({fixed, sizeof fixed});
  if (!header_bytes.empty()) iov.push_back({header_bytes.data(), header_bytes.size()});
  for (const iovec &v : payload)
    if (v.iov_len) iov.push_back(v);

  FdControlBuffer control;
  std::size_t first = 0;
  while (first < iov.size()) {
    msghdr mh{};
    mh.msg_iov = &iov[first];
    mh.msg_iovlen = std::min<std::size_t>(iov.size() - first, kIovBatch);
    // With the first bytes only: once any went, the descriptor has gone.
    if (pass_fd >= 0) AttachFd(&mh, &control, pass_fd);
    ssize_t n = ::sendmsg(fd_, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) pass_fd = -1;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        NINF_RETURN_IF_ERROR(WaitReady(POLLOUT));
        continue;
      }
      return IoError("send", errno);
    }
    bytes_sent_ += static_cast<uint64_t>(n);
    Consume(iov, first, static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

Status Channel::ReadFully(void *buf, std::size_t n) {
  iovec v{buf, n};
  return RecvPayload(std::span<const iovec>(&v, 1));
}

Status Channel::BeatIfDue(ReceiveBeat *beat) {
  if (!beat) return Status::Ok();
  const auto now = std::chrono::steady_clock::now();
  if (!beat->started) {  // the first bytes start the clock
    beat->started = true;
    beat->next = now + beat->period;
    return Status::Ok();
  }
  if (now < beat->next) return Status::Ok();
  beat->next = now + beat->period;
  // Best effort: a beat that would wait is left out. Room is short only
  // while the peer leaves the beats before it unread (it is still writing
  // and needs none), and waiting for it to read would stall the very
  // transfer the beat speaks for.
  pollfd room{fd_, POLLOUT, 0};
  if (::poll(&room, 1, 0) != 1 || !(room.revents & POLLOUT)) return Status::Ok();
  const wire::Heartbeat empty;
  return SendFrame(FRAME_HEARTBEAT, &empty);
}

Status Channel::RecvPayload(std::span<const iovec> into, uint32_t beat_ms) {
  ReceiveBeat beating;
  ReceiveBeat *beat = nullptr;
  if (beat_ms > 0) {
    beating.period = std::chrono::milliseconds(beat_ms);
    beat = &beating;
  }
  if (ssl_) {
    for (const iovec &v : into) NINF_RETURN_IF_ERROR(TlsRead(v.iov_base, v.iov_len, beat));
    return Status::Ok();
  }
  std::vector<iovec> iov(into.begin(), into.end());
  std::size_t first = 0;
  Consume(iov, first, 0);
  while (first < iov.size()) {
    msghdr mh{};
    mh.msg_iov = &iov[first];
    // A single huge iovec is capped by the kernel anyway; recvmsg handles it.
    mh.msg_iovlen = std::min<std::size_t>(iov.size() - first, kIovBatch);
    // On a Unix-domain socket a descriptor may come with the bytes; without
    // room for it the kernel would close it.
    FdControlBuffer control;
    if (local_) {
      mh.msg_control = control.bytes;
      mh.msg_controllen = sizeof control.bytes;
    }
    ssize_t n = ::recvmsg(fd_, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n > 0 && local_) KeepReceivedFd(&mh);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        NINF_RETURN_IF_ERROR(WaitReady(POLLIN));
        continue;
      }
      return IoError("receive", errno);
    }
    if (n == 0) return IoError("receive", 0);
    bytes_received_ += static_cast<uint64_t>(n);
    Consume(iov, first, static_cast<std::size_t>(n));
    NINF_RETURN_IF_ERROR(BeatIfDue(beat));
  }
  return Status::Ok();
}

void Channel::KeepReceivedFd(msghdr *mh) {
  const int fd = CollectFd(mh);
  if (fd < 0) return;
  if (received_fd_ >= 0) ::close(received_fd_);
  received_fd_ = fd;
}

Status Channel::Skip(uint64_t n) {
  char scratch[64 * 1024];
  while (n > 0) {
    std::size_t take = static_cast<std::size_t>(std::min<uint64_t>(n, sizeof scratch));
    NINF_RETURN_IF_ERROR(ReadFully(scratch, take));
    n -= take;
  }
  return Status::Ok();
}

Status Channel::RecvHeader(uint64_t max_payload, FrameHeader *out) {
  uint8_t fixed[kFrameHeaderSize];
  NINF_RETURN_IF_ERROR(ReadFully(fixed, sizeof fixed));
  return DecodeFrameHeader(fixed, max_payload, out);
}

Status Channel::RecvMessage(const FrameHeader &h, google::protobuf::MessageLite *msg) {
  std::string bytes(h.header_length, '\0');
  if (h.header_length) NINF_RETURN_IF_ERROR(ReadFully(bytes.data(), bytes.size()));
  if (!msg->ParseFromString(bytes))
    return Status(NINF_ERR_PROTOCOL, std::string("malformed ") + FrameTypeName(h.type) + " header");
  return Status::Ok();
}

Status Channel::RecvReply(FrameType expected, uint64_t max_payload,
                          google::protobuf::MessageLite *msg, FrameHeader *h) {
  NINF_RETURN_IF_ERROR(RecvHeader(max_payload, h));
  while (h->type == FRAME_HEARTBEAT) {  // proof of life only; each resets the timeout
    NINF_RETURN_IF_ERROR(Skip(h->header_length + h->payload_length));
    NINF_RETURN_IF_ERROR(RecvHeader(max_payload, h));
  }
  if (h->type == FRAME_ERROR) {
    wire::Error err;
    NINF_RETURN_IF_ERROR(RecvMessage(*h, &err));
    if (h->payload_length) NINF_RETURN_IF_ERROR(Skip(h->payload_length));
    return Status(ErrorFromWire(err.code()), err.message());
  }
  if (h->type != expected)
    return Status(NINF_ERR_PROTOCOL, std::string("expected ") + FrameTypeName(expected) +
                                         ", peer sent " + FrameTypeName(h->type));
  return RecvMessage(*h, msg);
}

Status Channel::SendError(const Status &st) {
  wire::Error err;
  EncodeError(st, &err);
  return SendFrame(FRAME_ERROR, &err);
}

}  // namespace ninf
