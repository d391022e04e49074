#include "call_server.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "buffer.h"
#include "layout.h"
#include "scalar_codec.h"

namespace ninf::stub {
namespace {

double Now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// After an error the client may still be sending its arrays. Closing a
// socket with unread data makes the kernel send a reset, which can destroy
// the error frame before the client reads it; so half-close and read away
// what is still coming, for a bounded time and amount.
void DrainBeforeClose(Channel &ch, uint64_t pending) {
  ::shutdown(ch.fd(), SHUT_WR);
  ch.set_timeout_ms(2000);
  constexpr uint64_t kMaxDrain = 1ull << 30;
  if (pending > kMaxDrain) pending = kMaxDrain;
  (void)ch.Skip(pending);
}

// While the routine runs, proves to the client that the executable is alive
// and computing: an empty FRAME_HEARTBEAT every period. The client's session
// timeout can then tell a long computation from a dead server.
//
// Only this thread writes to the channel between its start and Stop(); the
// main thread is inside the routine then. Stop() waits for a heartbeat being
// written to finish and joins the thread, so the RESULT that follows can
// never interleave with a heartbeat. No thread exists when period is 0.
class Heartbeats {
 public:
  Heartbeats(Channel &ch, uint32_t period_ms) : ch_(ch) {
    if (period_ms > 0) thread_ = std::thread([this, period_ms] { Run(period_ms); });
  }
  ~Heartbeats() { Stop(); }
  Heartbeats(const Heartbeats &) = delete;
  Heartbeats &operator=(const Heartbeats &) = delete;

  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

 private:
  void Run(uint32_t period_ms) {
    const auto period = std::chrono::milliseconds(period_ms);
    wire::Heartbeat beat;
    std::unique_lock<std::mutex> lock(mu_);
    // The lock is held while a beat is written, so Stop() cannot return in
    // the middle of one.
    while (!wake_.wait_for(lock, period, [this] { return stop_; }))
      if (!ch_.SendFrame(FRAME_HEARTBEAT, &beat).ok()) return;  // the client is gone
  }

  Channel &ch_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

void CallServer::Report(ControlMsg msg) {
  msg.call_id = handoff_.call_id;
  // ninfd may already be gone (shutdown); the call itself is unaffected.
  (void)SendControl(control_fd_, msg);
}

void CallServer::FailCall(Channel &ch, uint64_t unread_bytes, const Status &st, ControlMsg *done) {
  std::fprintf(stderr, "ninf executable %s (call %llu): %s\n", iface_.name().c_str(),
               static_cast<unsigned long long>(handoff_.call_id), st.ToString().c_str());
  (void)ch.SendError(st);
  if (unread_bytes) DrainBeforeClose(ch, unread_bytes);
  done->error_code = st.code();
}

Status CallServer::ServeCall(Channel &ch, const FrameHeader &h, ControlMsg *done) {
  const double t_start = Now();
  wire::Args args;
  NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &args));

  // IN scalars: decode, and keep integer values for the dimensions.
  const int nparams = iface_.params_size();
  std::vector<ScalarSlot> slots(static_cast<std::size_t>(nparams));
  std::vector<int64_t> values(static_cast<std::size_t>(nparams), 0);
  int next = 0;
  for (int i = 0; i < nparams; ++i) {
    const wire::Param &p = iface_.params(i);
    if (!IsInScalar(p)) continue;
    if (next >= args.scalars_size())
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    "too few scalar arguments: '" + p.name() + "' is missing");
    NINF_RETURN_IF_ERROR(DecodeScalar(p, args.scalars(next++), &slots[i], &values[i]));
  }
  if (next != args.scalars_size())
    return Status(NINF_ERR_ARGUMENT_MISMATCH, "too many scalar arguments for " + Signature(iface_));

  CallLayout layout;
  NINF_RETURN_IF_ERROR(ComputeLayout(iface_, values, handoff_.max_call_bytes, &layout));
  if (h.payload_length != layout.send_bytes)
    return Status(NINF_ERR_ARGUMENT_MISMATCH, "client sent " + std::to_string(h.payload_length) +
                                                  " bytes of arrays, the interface needs " +
                                                  std::to_string(layout.send_bytes));

  // Arrays go straight from the socket into their final buffers, which the
  // calls of a function handle reuse (warm pages, no faults, no zeroing).
  std::vector<Buffer> &buffers = buffers_;
  buffers.resize(static_cast<std::size_t>(nparams));
  std::vector<iovec> incoming, outgoing;
  std::vector<void *> argv(static_cast<std::size_t>(nparams));
  for (int i = 0; i < nparams; ++i) {
    const wire::Param &p = iface_.params(i);
    if (!IsArray(p)) {
      argv[i] = slots[i].Pointer();
      continue;
    }
    const uint64_t bytes = layout.params[i].bytes;
    // What the routine leaves unwritten of an OUT array goes back as it is:
    // zero, or this connection's own earlier result (buffer.h), never stale
    // memory of the process.
    if (!buffers[i].Reserve(bytes))
      return Status(NINF_ERR_NO_MEMORY,
                    "cannot allocate " + std::to_string(bytes) + " bytes for '" + p.name() + "'");
    argv[i] = buffers[i].data();
    if (SendsArray(p)) incoming.push_back({buffers[i].data(), bytes});
    if (ReturnsArray(p)) outgoing.push_back({buffers[i].data(), bytes});
  }
  NINF_RETURN_IF_ERROR(ch.RecvPayload(incoming));
  const double t_received = Now();
  Report({.kind = CTL_ARGS_RECEIVED});

  {
    Heartbeats heartbeats(ch, handoff_.heartbeat_ms);
    invoke_(argv.data());
    heartbeats.Stop();
  }
  const double t_computed = Now();

  Report({.kind = CTL_REPLYING});
  wire::Result result;
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_RESULT, &result, outgoing));

  done->recv_seconds = t_received - t_start;
  done->compute_seconds = t_computed - t_received;
  done->send_seconds = Now() - t_computed;
  return Status::Ok();
}

int CallServer::Run() {
  int client_fd = -1;
  int r = RecvControl(control_fd_, &handoff_, &client_fd);
  if (r != 1 || handoff_.kind != CTL_HANDOFF || client_fd < 0) {
    std::fprintf(stderr, "ninf executable %s: no call was handed over by ninfd\n",
                 iface_.name().c_str());
    if (client_fd >= 0) ::close(client_fd);
    return 2;
  }
  // ninfd keeps its sockets non-blocking; this process does blocking I/O.
  Channel ch(client_fd);  // owns it from here
  const int flags = ::fcntl(client_fd, F_GETFL);
  if (flags < 0 || ::fcntl(client_fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    std::perror("ninf executable: fcntl on the client socket");
    return 2;
  }
  const bool persistent = handoff_.flags & kHandoffPersistent;
  const uint64_t max_payload = handoff_.max_call_bytes ? handoff_.max_call_bytes : UINT64_MAX;

  int exit_status = 0;
  for (;;) {
    FrameHeader h;
    uint64_t in_before = ch.bytes_received(), out_before = ch.bytes_sent();
    Status st = ch.RecvHeader(max_payload, &h);
    if (!st.ok()) {
      // A persistent client that simply goes away ends the session cleanly.
      bool quiet_end =
          persistent && st.code() == NINF_ERR_COMMUNICATION && ch.bytes_received() == in_before;
      if (!quiet_end) {
        ControlMsg done{.kind = CTL_CALL_DONE};
        // An oversized frame was refused from its header alone: its arrays
        // are still coming.
        FailCall(ch, st.code() == NINF_ERR_TOO_LARGE ? h.payload_length : 0, st, &done);
        Report(done);
        exit_status = 1;
      }
      break;
    }
    if (h.type == FRAME_END) break;
    ControlMsg done{.kind = CTL_CALL_DONE};
    if (h.type != FRAME_ARGS) {
      st = Status(NINF_ERR_PROTOCOL, std::string("expected ARGS, got ") + FrameTypeName(h.type));
    } else {
      st = ServeCall(ch, h, &done);
    }
    if (!st.ok()) {
      // If the failure came before the arrays were read, they are still on
      // the wire: bytes received so far tell how much.
      uint64_t consumed = ch.bytes_received() - in_before;
      uint64_t frame = kFrameHeaderSize + h.header_length + h.payload_length;
      FailCall(ch, consumed < frame ? frame - consumed : 0, st, &done);
      exit_status = 1;
    }
    done.bytes_in = ch.bytes_received() - in_before;
    done.bytes_out = ch.bytes_sent() - out_before;
    Report(done);
    if (!st.ok() || !persistent) break;
  }
  return exit_status;
}

}  // namespace ninf::stub
