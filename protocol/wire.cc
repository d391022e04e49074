#include "protocol/wire.h"

#include <fcntl.h>
#include <poll.h>
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

namespace ninf {
namespace {

constexpr int kIovBatch = 64;

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

}  // namespace

Channel::Channel(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  local_ = ::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len) == 0 &&
           addr.ss_family == AF_UNIX;
}

Channel::~Channel() {
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
  return Status::Ok();
}

int Channel::TakeReceivedFd() { return std::exchange(received_fd_, -1); }

// Every read and write is non-blocking (MSG_DONTWAIT) and waits here when
// the socket is not ready, so the timeout bounds each step: a blocking
// sendmsg of a whole array would otherwise sit in the kernel for as long as
// the peer does not read, whatever the timeout says.
Status Channel::WaitReady(short events) {
  pollfd p{fd_, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms_ < 0 ? -1 : timeout_ms_);
    if (r > 0) return Status::Ok();
    if (r == 0)
      return Status(NINF_ERR_TIMEOUT,
                    "no progress from the peer for " + std::to_string(timeout_ms_) + " ms");
    if (errno != EINTR) return IoError("poll", errno);
  }
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

Status Channel::RecvPayload(std::span<const iovec> into) {
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
