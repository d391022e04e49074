// The executable's side of a call: takes the client connection that ninfd
// hands over on the control channel, then serves ARGS frames on it (one for a
// one-shot call, many for a persistent function handle) until FRAME_END, the
// client closing, or an error. When CTL_HANDOFF.heartbeat_ms > 0, the client
// hears a FRAME_HEARTBEAT that often for the whole call: from the main thread
// while the arguments arrive (as long as bytes do: Channel::RecvPayload) and
// while it waits for a slot, then from a helper thread while the routine
// runs, stopped before the RESULT is written (heartbeats.h). Each call is held to the
// CPU budget of CTL_HANDOFF.cpu_seconds, and a handle's later calls wait
// for a job slot (control.h). Each call is first planned as data
// (call_plan.h: where each array comes from, where its result goes) and the
// plan then run: decode -> plan -> receive -> invoke -> reply.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "ninf.pb.h"
#include "protocol/control.h"
#include "protocol/layout.h"
#include "protocol/scalar_codec.h"
#include "protocol/shared_memory.h"
#include "protocol/slot_lease.h"
#include "protocol/status.h"
#include "protocol/tls.h"
#include "protocol/wire.h"
#include "stubs/runtime/buffer.h"
#include "stubs/runtime/call_plan.h"
#include "stubs/runtime/heartbeats.h"
#include "stubs/runtime/kept_data.h"
#include "stubs/runtime/ninf_stub.h"
#include "stubs/runtime/peak_memory.h"

namespace ninf::stub {

// Decodes the IN scalars of `args` into one slot per parameter of `iface`
// (the routine's argument for each IN scalar) and, for the integer ones,
// their values for dimensions and CalcOrder. Errors:
// NINF_ERR_ARGUMENT_MISMATCH for too few or too many scalars or a bad value.
Status DecodeInScalars(const wire::FunctionInterface &iface, const wire::Args &args,
                       std::vector<ScalarSlot> *slots, std::vector<int64_t> *values);

class CallServer {
 public:
  // `team`: the ranks of a parallel executable, this process being rank 0
  // (team.h); null for an ordinary one.
  CallServer(const wire::FunctionInterface &iface, ninf_stub_invoke_fn invoke, int control_fd,
             const ninf_stub_team *team = nullptr)
      : iface_(iface),
        invoke_(invoke),
        control_fd_(control_fd),
        team_(team),
        heartbeats_(control_fd, [this] { Report({.kind = CTL_CLIENT_GONE}); }) {}

  // An executable on another host than ninfd (launch.h): clients are
  // redirected to `listen_fd`, and a CTL_HANDOFF names the one to take by
  // its token instead of passing its socket.
  void set_redirect_listener(int listen_fd) { redirect_listener_ = listen_fd; }

  // Waits for the handoff, serves the connection, and returns the process
  // exit status: 0 when every call succeeded, 1 after a failed call, 2 when
  // no connection was handed over. A reusable hand-off (kHandoffReusable)
  // whose call succeeded is followed by CTL_RELEASED and the wait for the
  // next one; ninfd closing the channel then ends the process with 0.
  int Run();

  // Tells OpenBLAS and OpenMP, if the process has them, how many threads
  // this call may use.
  static void ApplyThreadBudget(uint32_t threads);

 private:
  // Receives CTL_HANDOFF and the client socket into handoff_ and *client_fd
  // (-1 for a redirected client, still to come: AcceptRedirected); false
  // when ninfd closed the channel or sent something else.
  bool WaitForHandoff(int *client_fd);

  // Whether the process has a thread library the budget applies to.
  static bool UsesThreads();

  // Serves the calls of one client connection (one, or a handle's many),
  // closes it, and returns the exit status Run() documents.
  int Serve(int client_fd);

  // A call whose arrays are in shared memory (shared_memory.h): maps the
  // segment that came with its ARGS frame, or keeps the one mapped for an
  // earlier call of the connection; it must hold `bytes`.
  Status AttachSegment(Channel &ch, uint64_t bytes);

  // One frame of the connection, other than FRAME_END, whose header `h` was
  // just read: an ARGS frame is served (after a job slot, for a handle's
  // later calls), anything else refused.
  Status ServeFrame(Channel &ch, const FrameHeader &h, ControlMsg *done);

  // Serves one FRAME_ARGS whose frame header `h` was just read. A failure
  // is returned, not reported: Run tells the client and ninfd. The steps
  // below, in this order, run the call's plan (call_plan.h).
  // `slot_after_arrival`: the call asks for its slot once its arguments are
  // in (kHandoffArgsFirst), and computes once it has it. A call on the
  // slot its handle kept (leased_call_) asks nothing and reports its steps
  // in the lease page instead of to ninfd (protocol/slot_lease.h).
  Status ServeCall(Channel &ch, const FrameHeader &h, bool slot_after_arrival, ControlMsg *done);

  // One call as it goes through ServeCall's steps.
  struct Call {
    wire::Args args;
    std::vector<ScalarSlot> slots;  // the IN scalars, decoded
    CallLayout layout;
    CallPlan plan;
    std::vector<void *> argv;  // the routine's arguments
  };
  // Reads the ARGS message, decodes its scalars, sizes the arrays and plans
  // the call; the CalcOrder goes to done->work_flops.
  Status DecodeCall(Channel &ch, const FrameHeader &h, Call *call, ControlMsg *done);
  // Points each argument at its memory as the plan says (the segment, a
  // buffer of this process made ready for the call, a scalar's slot) and
  // lists the buffers the payload fills, in parameter order.
  Status PlaceArguments(Call *call, std::vector<iovec> *incoming);
  // Makes buffers_[i] ready for parameter i's array as `pp` says: sized,
  // and either listed in *incoming, about to be fetched, or cleared of what
  // a previous client left.
  Status ReadyBuffer(int i, const ParamPlan &pp, std::vector<iovec> *incoming);
  // Attaches the segment, places the arguments, receives the payload and
  // fetches the referenced arrays.
  Status ReceiveArrays(Channel &ch, Call *call);
  // Who fetches this call's data references: its control channel and the
  // key its client proved (HANDOFF).
  FetchAuth FetchAuthority() const;
  // A two-phase call's ticket: the client may go now.
  Status SendTicket(Channel &ch);
  // Runs the routine (beside the team's other ranks), under the CPU budget,
  // with heartbeats.
  Status Invoke(Channel &ch, Call *call);
  // Hands the arrays the plan keeps to ninfd's store and names them in
  // *result.
  Status KeepResults(const Call &call, wire::Result *result);
  // Sends the RESULT frame, or keeps it for the collector (two-phase).
  Status Reply(Channel &ch, const Call &call, wire::Result *result);

  // Readies the client's socket (blocking, or non-blocking under TLS) and,
  // over TLS, the session: 0, or the exit status of a failure (which is
  // reported to ninfd).
  int StartSession(Channel &ch, int client_fd);
  // Over TLS: accepts the client's handshake with the key HANDOFF carried
  // (used once, then wiped) and runs the channel over it.
  Status AcceptTls(Channel &ch, int client_fd);
  // CTL_CALL_DONE for the call just served (`done` with its byte counts),
  // after the kept slot, if the call began on it, is kept or given back;
  // `offer_lease`: a handle's call that succeeded, which offers its lease
  // page with it if it has none yet.
  void ReportCallDone(ControlMsg done, bool offer_lease);

  // Tells the client about `st` (reading away `unread_bytes` it is still
  // sending) and records the failure in *done.
  void FailCall(Channel &ch, uint64_t unread_bytes, const Status &st, ControlMsg *done);

  // Asks ninfd for a job slot and waits for the answer, sending the client
  // heartbeats meanwhile (and one at once on CTL_PROBE): a persistent
  // executable's next call, or, admitted after arrival
  // (kHandoffArgsFirst), every call once its arguments are in; `want`
  // then carries what ninfd's queue orders by (control.h).
  Status WaitForSlot(Channel &ch, ControlMsg want);
  // A handle's later call whose arguments are still coming (kArrivingAsksRoom):
  // tells ninfd how many bytes will come and waits for room under its
  // arrival bounds (CTL_ROOM) the same way.
  Status WaitForRoom(Channel &ch, uint64_t payload_bytes);
  // Waits for ninfd's answer of `kind` (CTL_SLOT, CTL_ROOM) to what was
  // just reported, beating as above; the answer's error_code as a Status.
  Status AwaitAnswer(Channel &ch, uint32_t kind, ControlMsg *answer);

  // Thread-safe (the heartbeat thread reports a lost client). `pass_fd`
  // (>= 0) travels with the message.
  void Report(ControlMsg msg, int pass_fd = -1);
  // A new lease page for ninfd (protocol/slot_lease.h), kept mapped here;
  // -1 when this process cannot share one (a TCP control channel).
  int OfferLeasePage();

  const wire::FunctionInterface &iface_;
  ninf_stub_invoke_fn invoke_;
  int control_fd_;
  int redirect_listener_ = -1;
  // A redirected client's TLS session, from AcceptRedirected to the call.
  tls::SslPtr redirected_tls_;
  const ninf_stub_team *team_;
  std::mutex report_mutex_;  // one message at a time on a TCP channel
  ControlMsg handoff_;
  std::vector<Buffer> buffers_;  // one per parameter, kept across calls and clients
  SharedSegment segment_;        // the current client's arrays, on the same-host path
  uint64_t calls_ = 0;           // ARGS frames served on this connection
  bool submitted_ = false;       // a two-phase call's ticket is out: results go to ninfd
  Heartbeats heartbeats_;        // while a routine runs (heartbeats.h)
  PeakMemory peak_;              // each call's resident peak (CTL_CALL_DONE)
  SlotLease lease_;              // a handle's kept slot (offered with its first CALL_DONE)
  bool leased_call_ = false;     // the call under way began on the kept slot
  bool lease_offered_ = false;   // OfferLeasePage tried (a TCP channel: never again)
};

}  // namespace ninf::stub
