// Blocking frame I/O on a connected stream socket: what the client library
// and the executables' stub runtime speak. (ninfd itself is event-driven and
// uses only the frame codec of frame.h.)
//
// Arrays are never copied into a message buffer: SendFrame gathers the frame
// header, the protobuf header and the caller's array pointers into one
// sendmsg() (writev), and RecvPayload reads straight into the destination
// buffers (readv). Lengths are 64-bit; transfers over 2 GiB are looped.
//
// Over TLS (UseTls) the same calls encrypt and decrypt: each large payload
// piece is handed to SSL_write straight from the caller's memory (only the
// small pieces, the frame and protobuf headers, are gathered into one
// record), and RecvPayload decrypts into the destination buffers. The
// socket is then non-blocking and every step still waits in poll, so the
// timeout keeps its meaning.
#pragma once

#include <google/protobuf/message_lite.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "protocol/frame.h"
#include "protocol/protocol_export.h"
#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf {

class NINF_PROTOCOL_API Channel {
 public:
  // Takes ownership of `fd` (closed by the destructor). timeout_ms < 0 waits
  // forever; otherwise each read or write fails with NINF_ERR_TIMEOUT when
  // the peer makes no progress for that long.
  explicit Channel(int fd, int timeout_ms = -1);
  ~Channel();
  Channel(const Channel &) = delete;
  Channel &operator=(const Channel &) = delete;

  int fd() const { return fd_; }

  // Puts the connection `fd` in place of this one, under the same
  // descriptor number (dup2), so that whoever aborts the channel from
  // another thread by its number reaches the new connection. Takes
  // ownership of `fd`. Errors: NINF_ERR_INTERNAL (dup2 failed; `fd` is
  // closed, the old connection is kept).
  Status Replace(int fd);
  void set_timeout_ms(int ms) { timeout_ms_ = ms; }
  int timeout_ms() const { return timeout_ms_; }

  // From now on the frames go through the TLS session `ssl` (established
  // on this channel's socket), in place of plaintext or of the session
  // before it, which is freed without a close_notify: on a hand-over the
  // socket's next bytes belong to the executable's handshake. Null goes
  // back to plaintext the same way.
  void UseTls(tls::SslPtr ssl);
  bool tls() const { return ssl_ != nullptr; }
  ssl_st *ssl() const { return ssl_.get(); }

  // Sends one frame: header message `msg` (may be null for an empty header)
  // followed by the payload pieces, all in one gathered write. `pass_fd` >= 0
  // (Unix-domain sockets only) travels with the frame's first byte.
  Status SendFrame(FrameType type, const google::protobuf::MessageLite *msg,
                   std::span<const iovec> payload = {}, int pass_fd = -1);

  // The descriptor that came with the bytes read last (SCM_RIGHTS), now the
  // caller's; -1 when none did. One not taken is closed by the next read
  // that brings another, or by the destructor.
  int TakeReceivedFd();

  // Whether the socket is a Unix-domain one (the same-host path).
  bool local() const { return local_; }

  // Whether the next `n` bytes of the stream have come already (nothing to
  // wait for to read them): they are in the socket or, over TLS, held
  // decrypted by the session or in the socket with their records' framing.
  // Over TLS it may say no to bytes that have come (what OpenSSL read ahead
  // and has not decrypted is counted nowhere), never yes to bytes that
  // have not.
  bool Arrived(uint64_t n) const;

  // Reads and validates the next 24-byte frame header.
  Status RecvHeader(uint64_t max_payload, FrameHeader *out);

  // Reads the frame's protobuf header and parses it into `msg`.
  Status RecvMessage(const FrameHeader &h, google::protobuf::MessageLite *msg);

  // Reads exactly the bytes the iovecs describe, straight into them.
  // `beat_ms` > 0: while they arrive, an empty FRAME_HEARTBEAT goes back to
  // the peer each time that long has passed since the first bytes or the
  // last beat, after a read that brought bytes. A peer that has written all
  // of a large payload and waits for the answer hears that its bytes still
  // arrive: a slow, shared link holds megabytes in the buffers between the
  // two ends (sockets, relays, queues), which may take longer than the
  // peer's timeout to drain. Reads that bring nothing beat nothing, so a
  // stalled transfer stays silent and the peer's timeout still fires. A beat
  // for which the socket has no room is left out: it never stalls the read.
  Status RecvPayload(std::span<const iovec> into, uint32_t beat_ms = 0);

  // Reads and throws away n bytes (a payload nobody wants).
  Status Skip(uint64_t n);

  // Receives a reply, skipping FRAME_HEARTBEATs: if the next frame is
  // FRAME_ERROR its code and message
  // are returned as a Status; otherwise the frame must be of type `expected`
  // and its header is parsed into `msg`. The payload (if any) is left unread;
  // its header is stored in *h.
  Status RecvReply(FrameType expected, uint64_t max_payload, google::protobuf::MessageLite *msg,
                   FrameHeader *h);

  // Sends FRAME_ERROR with `st`'s code and message.
  Status SendError(const Status &st);

  // Bytes moved so far (frames and payloads), for statistics.
  uint64_t bytes_sent() const { return bytes_sent_; }
  uint64_t bytes_received() const { return bytes_received_; }

 private:
  Status WaitReady(short events);
  // Takes the SCM_RIGHTS descriptor of a received message into received_fd_.
  void KeepReceivedFd(msghdr *mh);
  Status ReadFully(void *buf, std::size_t n);
  // The beats of one RecvPayload (beat_ms > 0): the next is due at `next`,
  // counted from the first read that brought bytes.
  struct ReceiveBeat {
    std::chrono::milliseconds period{0};
    bool started = false;
    std::chrono::steady_clock::time_point next;
  };
  // After a read that brought bytes: sends a beat if one is due (never when
  // `beat` is null).
  Status BeatIfDue(ReceiveBeat *beat);
  Status TlsWrite(const void *data, std::size_t n);
  Status TlsRead(void *data, std::size_t n, ReceiveBeat *beat);
  // What an SSL call that returned `r` means: wait and retry (Ok), or the
  // error.
  Status TlsWait(int r, const char *what);

  int fd_;
  int timeout_ms_;
  bool local_ = false;
  int received_fd_ = -1;
  uint64_t bytes_sent_ = 0;
  uint64_t bytes_received_ = 0;
  tls::SslPtr ssl_;
};

// Opens a TCP connection to host:port (name resolution included) with
// TCP_NODELAY set. Returns the fd in *fd. Errors: NINF_ERR_CONNECT.
NINF_PROTOCOL_API Status ConnectTcp(const std::string &host, int port, int timeout_ms, int *fd);

// Opens a connection to the Unix-domain socket at `path`. Errors:
// NINF_ERR_CONNECT.
NINF_PROTOCOL_API Status ConnectUnix(const std::string &path, int *fd);

// The pid of the process at the other end of a Unix-domain socket (0 if the
// kernel will not say).
NINF_PROTOCOL_API int PeerPid(int fd);

// Whether a TCP socket's peer is on this host's loopback (127.0.0.0/8, ::1).
NINF_PROTOCOL_API bool PeerIsLoopback(int fd);

}  // namespace ninf
