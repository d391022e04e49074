// One client connection: reads requests frame by frame, writes replies, and
// after FRAME_CALL parks the socket for the executable that takes it over.
//
// States:
//   handshake a TLS connection (a listener with tls_cert) runs its TLS
//             handshake, driven by the same poll (non-blocking SSL_accept)
//             and bounded by the request timeout: a client stalling in it
//             is closed. A first frame in plaintext ("NINF") gets one
//             plaintext FRAME_ERROR saying the server requires TLS.
//   reading   polls for input (and output while replies are pending). One
//             timer bounds it: a connection that starts no request within
//             the idle timeout is closed, and a request must arrive whole
//             within the request timeout of its first byte (bytes trickling
//             in do not extend it, so a slow sender cannot hold the
//             connection).
//   parked    FRAME_CALL was read: nothing more is read, because what follows
//             (FRAME_ARGS and arrays) belongs to the executable. The socket is
//             only watched for the peer's hangup, without reading: first
//             EPOLLRDHUP (the peer shut its write side, which may be a
//             half-close and not a hangup: the server probes), then only
//             errors (a reset proves the peer gone). While
//             the call waits for a slot, the connection may send
//             FRAME_HEARTBEATs; the server hands the socket over only once
//             every byte of them is out (OnOutputFlushed).
//   finishing the last replies (usually a FRAME_ERROR) are being written;
//   draining  then the write side is shut and the connection reads and drops
//             what the peer still sends until it closes, so that our close
//             does not reset the connection before the peer has read the
//             error (a close with unread input sends RST). Both are bounded
//             by a short linger timer.
//   closed    handles are closing; the object deletes itself afterwards.
//
// All socket I/O uses MSG_DONTWAIT, so it never blocks even after the
// socket was switched to blocking mode for the executable.
//
// Over TLS, requests are read and replies written through the session. A
// daemon that gives the socket to another process over TLS sends its last
// frame (a secret: Reply(..., secret) wipes it from memory as it is written) and,
// once it is out, frees its session without a close_notify (SealTls): from
// then on the peer and that process speak their own TLS session on the
// socket, and this connection writes nothing more on it (heartbeats and
// error frames are dropped; Fail only closes). What ninfd sends there
// (FRAME_HANDOVER and its key) is ninfd's: server/client_connection.h.
// A plaintext connection whose first bytes are a TLS ClientHello gets one
// FRAME_ERROR saying that this server does not speak TLS.
#pragma once

#include <google/protobuf/message_lite.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "daemon/request_reader.h"
#include "daemon/transport.h"
#include "daemon/unique_fd.h"
#include "protocol/auth.h"
#include "protocol/frame.h"
#include "protocol/status.h"
#include "protocol/tls.h"

namespace ninf::daemon {

class Connection {
 public:
  class Delegate {
   public:
    virtual ~Delegate() = default;
    // A complete request. For FRAME_CALL the connection is already parked
    // and every earlier reply has been written out.
    virtual void OnRequest(Connection &conn, const FrameHeader &h, std::string_view body) = 0;
    // The peer sent something that is not a valid request; the connection
    // answers FRAME_ERROR and closes by itself after this call.
    virtual void OnProtocolError(Connection &conn, const Status &st) = 0;
    // The peer is gone (a reset or error) while the connection was parked
    // and watched.
    virtual void OnHangup(Connection &conn) = 0;
    // The parked peer shut its write side: a half-close (it still reads) or
    // the first sign of a hangup. Only a probe tells which: a write to a
    // closed peer comes back as a reset, and then OnHangup follows.
    virtual void OnPeerShutWrite(Connection &conn) = 0;
    // Last call: the handles are closed; the owner frees the object (which
    // closes the fd) from here.
    virtual void OnClosed(Connection &conn) = 0;
    // A parked connection asked to (NotifyWhenFlushed) has written all its
    // pending output.
    virtual void OnOutputFlushed(Connection &conn) = 0;
    // A parked connection asked to (WatchInput) has bytes to read, or its
    // peer closed: PeekInput() tells which. Nothing was read.
    virtual void OnInputArrived(Connection &conn) = 0;
  };

  // Takes ownership of `fd` and starts reading; null if the socket cannot
  // be watched. The caller owns the object but must let it close its
  // handles (Close(), or the peer going away) and free it only in
  // Delegate::OnClosed.
  struct Timeouts {
    uint64_t idle_ms = 60000;     // no request started
    uint64_t request_ms = 10000;  // first byte of a request to its last
  };
  // `rules` (which outlives the connection) says which requests the daemon
  // takes (its frame table, frame_table.h).
  // `tls`: the listener's TLS context (null: plaintext).
  // C: Connection, or a daemon's own kind of connection, a class derived
  // from this one with what that daemon alone keeps per connection, whose
  // public constructor takes the arguments of Connection's (ninfd:
  // server/client_connection.h).
  template <class C = Connection>
  static std::unique_ptr<C> Open(uv_loop_t *loop, UniqueFd fd, uint64_t id, std::string peer,
                                 Delegate *delegate, Timeouts timeouts, const RequestRules &rules,
                                 const tls::Context &tls = {}) {
    std::unique_ptr<C> conn(new C(std::move(fd), id, std::move(peer), delegate, timeouts, rules));
    if (!Start(*conn, loop, timeouts, tls)) return nullptr;  // no handle was opened
    return conn;
  }
  virtual ~Connection() = default;

  // Queues one reply frame and writes as much as the socket takes now.
  // `secret`: the frame carries one (a key): from now on until the session
  // is sealed, the output buffer is wiped once written.
  void Reply(FrameType type, const google::protobuf::MessageLite *msg, bool secret = false);

  // Queues whole frames already encoded (kept data: a two-phase result, or
  // a header with its payload) and writes as much as the socket takes now.
  void ReplyBytes(std::string frames);

  // Answers FRAME_ERROR with `st`, then shuts the connection down gently.
  void Fail(const Status &st);

  // Shuts the connection down gently without a further frame: what is
  // queued is written, then the write side is shut and input drained.
  void Finish();

  // Turns the hangup watch of a parked connection on or off.
  void WatchHangup(bool on);

  // Parked only: calls Delegate::OnInputArrived once the socket has input
  // (without reading it: it belongs to the executable), then stops watching.
  void WatchInput(bool on);
  // What waits unread in the socket, without reading it: bytes, the peer's
  // close (or a reset), or nothing yet. One syscall.
  enum class Unread { kNothing, kBytes, kEnd };
  Unread PeekInput() const;

  // Parked only: sends an empty FRAME_HEARTBEAT every `period_ms` (0:
  // stops them). A beat is skipped while the previous one is still being
  // written, so at most one frame is ever pending.
  void SetHeartbeats(uint64_t period_ms);
  // Parked only: one FRAME_HEARTBEAT now, whose reset tells whether a peer
  // that shut its side is gone (see OnPeerShutWrite); while heartbeats run,
  // the next comes soon, to learn it quickly. Also while another process
  // owns the socket but cannot write (a stopped executable): the caller
  // makes sure the stream is at a frame boundary.
  void BeatNow();

  // Whether reply bytes wait to be written.
  bool output_pending() const { return out_sent_ < out_.size(); }

  // Parked only: calls Delegate::OnOutputFlushed once the pending output is
  // written (the socket may be handed to an executable only then).
  void NotifyWhenFlushed();

  // Closes at once (pending output is dropped). Safe to call repeatedly.
  void Close();

  // Its bytes, plaintext or TLS: whether it came through a TLS listener,
  // whether the daemon's session still runs, the client certificate's
  // subject, whether the session was sealed (transport.h).
  const Transport &transport() const { return transport_; }

  uint64_t id() const { return id_; }  // also the order of acceptance
  // What the daemon accepts (its frame table's RequestRules).
  const RequestRules &rules() const { return reader_.rules(); }
  uint64_t requests() const { return requests_; }  // complete requests read
  bool peer_shut_write() const { return peer_shut_write_; }
  int fd() const { return fd_.get(); }
  const std::string &peer() const { return peer_; }
  // Where the connection is in its life (the header comment's states).
  enum class State { kHandshake, kReading, kParked, kFinishing, kDraining, kClosed };
  State state() const { return state_; }
  // Reading, with bytes of a request read but not all of it yet; in a TLS
  // handshake, once the client's first bytes came (a handshake no byte of
  // which came is a socket that has sent nothing, as a silent plaintext one).
  bool request_started() const {
    return (state_ == State::kReading && in_request_) ||
           (state_ == State::kHandshake && transport_.begun());
  }
  // uv_now() of the loop when the connection was opened.
  uint64_t opened_ms() const { return opened_ms_; }

  // Authentication (server_auth.cc drives it; protocol/auth.h has the
  // exchange). Unused when ninfd has no key.
  struct AuthState {
    bool authenticated = false;
    bool challenged = false;  // FRAME_CHALLENGE sent: FRAME_PROOF must follow
    auth::Key key;            // the key the client named (a copy: a reload may come)
    std::string key_id;       // once authenticated: the id of the key it proved
    auth::Nonce client_nonce{};
    auth::Nonce server_nonce{};
  };
  AuthState &auth() { return auth_; }
  const AuthState &auth() const { return auth_; }
  // Changes the timeout for starting a request (an unauthenticated
  // connection gets the request timeout; see Server::Accept), effective now
  // when no request is under way.
  void SetIdleTimeout(uint64_t ms);

 protected:
  // For Open<C>: a derived class's constructor passes its arguments on.
  Connection(UniqueFd fd, uint64_t id, std::string peer, Delegate *delegate, Timeouts timeouts,
             const RequestRules &rules);

  // Once the last frame of the daemon's session is out: frees the session
  // without a close_notify (Transport::Seal); the connection writes nothing
  // more (ninfd's TLS hand-over, server/client_connection.h).
  void SealTls();

 private:
  // Opens the handles of a new connection and starts the TLS handshake or
  // the reading; false (logged) if it cannot, with no handle opened.
  static bool Start(Connection &conn, uv_loop_t *loop, Timeouts timeouts, const tls::Context &tls);

  static void OnPoll(uv_poll_t *handle, int status, int events);
  static void OnTimer(uv_timer_t *timer);
  static void OnHandleClosed(uv_handle_t *handle);

  void ReadRequests();
  void ContinueHandshake();
  void Drain();
  bool Flush();
  void SendHeartbeat();
  void DispatchFrame();
  // Watches what the state needs. If libuv refuses, logs it, closes the
  // connection and returns false.
  bool UpdatePoll();

  uv_poll_t poll_{};
  uv_timer_t timer_{};
  UniqueFd fd_;
  uint64_t id_;
  uint64_t opened_ms_ = 0;
  std::string peer_;
  Delegate *delegate_;
  Timeouts timeouts_;
  bool in_request_ = false;  // the request timer runs
  uint64_t requests_ = 0;
  bool peer_shut_write_ = false;  // parked: EPOLLRDHUP seen; only errors are watched now
  State state_ = State::kReading;
  RequestReader reader_;
  bool call_pending_ = false;  // a parked CALL waits for the replies before it
  bool watch_hangup_ = false;
  bool watch_input_ = false;
  bool notify_flushed_ = false;
  uint64_t heartbeat_ms_ = 0;  // parked and sending heartbeats
  std::string out_;
  std::size_t out_sent_ = 0;
  uint64_t drained_ = 0;
  int poll_events_ = 0;  // what uv_poll currently watches
  int open_handles_ = 2;
  AuthState auth_;
  Transport transport_;
  bool wipe_output_ = false;  // a secret was replied: wipe what was written, until sealed
};

}  // namespace ninf::daemon
