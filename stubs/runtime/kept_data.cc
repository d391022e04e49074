#include "stubs/runtime/kept_data.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/address.h"
#include "protocol/numeric_connect.h"
#include "protocol/wire.h"

namespace ninf::stub {
namespace {

// How long a fetch may take to connect and to answer between bytes.
constexpr int kFetchTimeoutMs = 30000;

// A Unix-domain connection (not wire.h's ConnectUnix: connect.cc would pull
// getaddrinfo into the statically linked executable).
Status ConnectLocal(const std::string &path, int *out) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path)
    return Status(NINF_ERR_INVALID_ARGUMENT, "path too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(NINF_ERR_CONNECT, std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(NINF_ERR_CONNECT, std::strerror(err));
  }
  *out = fd;
  return Status::Ok();
}

Status WriteAll(int fd, const void *data, uint64_t bytes) {
  const char *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status(NINF_ERR_NO_MEMORY, std::string("memfd: ") + std::strerror(errno));
    p += n;
    bytes -= static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

}  // namespace

Status FetchKept(const wire::DataRef &ref, void *into) {
  const std::string &where = ref.address();
  int fd = -1;
  HostPort at;
  Status st = where.rfind("unix:", 0) == 0 ? ConnectLocal(where.substr(5), &fd)
              : !ParseHostPort(where, HostPort{}, &at).ok()
                  ? Status(NINF_ERR_INVALID_ARGUMENT, "not host:port")
                  : ConnectNumeric(at.host, at.port, kFetchTimeoutMs, &fd);
  if (!st.ok()) return Status(NINF_ERR_CONNECT, "kept data at " + where + ": " + st.message());
  Channel ch(fd, kFetchTimeoutMs);
  wire::StoreKey key;
  key.set_id(ref.id());
  key.set_token(ref.token());
  st = ch.SendFrame(FRAME_FETCH, &key);
  wire::Data data;
  FrameHeader h;
  if (st.ok()) st = ch.RecvReply(FRAME_DATA, ref.bytes(), &data, &h);
  if (st.ok() && h.payload_length != ref.bytes())
    st = Status(NINF_ERR_PROTOCOL, "got " + std::to_string(h.payload_length) + " bytes, expected " +
                                       std::to_string(ref.bytes()));
  if (st.ok()) {
    iovec v{into, ref.bytes()};
    st = ch.RecvPayload(std::span<const iovec>(&v, 1));
  }
  if (!st.ok()) return Status(st.code(), "kept data at " + where + ": " + st.message());
  return Status::Ok();
}

Status BytesToMemfd(const void *data, uint64_t bytes, int *out) {
  const int fd = ::memfd_create("ninf-kept", MFD_CLOEXEC);
  if (fd < 0) return Status(NINF_ERR_NO_MEMORY, std::string("memfd: ") + std::strerror(errno));
  if (Status st = WriteAll(fd, data, bytes); !st.ok()) {
    ::close(fd);
    return st;
  }
  *out = fd;
  return Status::Ok();
}

Status FrameToMemfd(FrameType type, const google::protobuf::MessageLite &msg,
                    std::span<const iovec> payload, int *out, uint64_t *bytes) {
  uint64_t payload_bytes = 0;
  for (const iovec &v : payload) payload_bytes += v.iov_len;
  std::string head;
  AppendFrame(&head, type, &msg, payload_bytes);
  int fd = -1;
  NINF_RETURN_IF_ERROR(BytesToMemfd(head.data(), head.size(), &fd));
  for (const iovec &v : payload) {
    if (Status st = WriteAll(fd, v.iov_base, v.iov_len); !st.ok()) {
      ::close(fd);
      return st;
    }
  }
  *out = fd;
  *bytes = head.size() + payload_bytes;
  return Status::Ok();
}

Status KeepOnServer(int control_fd, uint64_t call_id, uint32_t param, int fd, uint64_t bytes,
                    uint64_t *id, std::string *token) {
  ControlMsg keep;
  keep.kind = CTL_KEEP;
  keep.call_id = call_id;
  keep.param = param;
  keep.bytes_out = bytes;
  const int sent = SendControl(control_fd, keep, fd);
  ::close(fd);  // ninfd has its own copy now
  if (sent != 0) return Status(NINF_ERR_SERVER, "ninfd went away before the data could be kept");
  if (param == kKeepWholeResult) return Status::Ok();
  for (;;) {
    ControlMsg answer;
    const int got = RecvControl(control_fd, &answer, nullptr);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return Status(NINF_ERR_SERVER, "ninfd went away before the data was kept");
    if (answer.kind != CTL_KEPT) continue;  // a late probe
    if (answer.error_code != NINF_OK) {
      const int code = answer.error_code;
      return Status(ErrorFromWire(code), code == NINF_ERR_LIMIT
                                             ? "the server's store for kept data is full"
                                             : "the server could not keep the array");
    }
    *id = answer.store_id;
    token->assign(reinterpret_cast<const char *>(answer.token), sizeof answer.token);
    return Status::Ok();
  }
}

}  // namespace ninf::stub
