#include "stubs/runtime/call_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "protocol/launch.h"
#include "protocol/layout.h"
#include "protocol/scalar_codec.h"
#include "protocol/tls.h"
#include "stubs/runtime/buffer.h"
#include "stubs/runtime/call_plan.h"
#include "stubs/runtime/kept_data.h"
#include "stubs/runtime/team.h"

// The thread setters of OpenBLAS and OpenMP, if the routine's libraries
// have them (CallServer::ApplyThreadBudget).
extern "C" void openblas_set_num_threads(int) __attribute__((weak));
extern "C" void omp_set_num_threads(int) __attribute__((weak));

namespace ninf::stub {
namespace {

// How long the client may take for its hand-over handshake (it starts it
// as soon as it has read FRAME_HANDOVER).
constexpr int kHandoverHandshakeMs = 10000;

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

// Holds the calling process to a CPU budget for the duration of one call:
// RLIMIT_CPU's soft limit is set to the CPU time used so far plus the budget
// (the kernel sends SIGXCPU, which ends the process, when it is spent; ninfd
// then tells the client which limit it hit) and lifted again afterwards. The
// hard limit is never touched, so the soft one can always be raised back.
class CpuBudget {
 public:
  explicit CpuBudget(uint32_t seconds) {
    if (seconds == 0 || ::getrlimit(RLIMIT_CPU, &saved_) != 0) return;
    rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) != 0) return;
    const rlim_t used = static_cast<rlim_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1;
    rlimit limit = saved_;
    limit.rlim_cur = used + seconds;
    if (saved_.rlim_max != RLIM_INFINITY && limit.rlim_cur > saved_.rlim_max)
      limit.rlim_cur = saved_.rlim_max;
    active_ = ::setrlimit(RLIMIT_CPU, &limit) == 0;
  }
  ~CpuBudget() {
    if (active_) (void)::setrlimit(RLIMIT_CPU, &saved_);
  }
  CpuBudget(const CpuBudget &) = delete;
  CpuBudget &operator=(const CpuBudget &) = delete;

 private:
  rlimit saved_{};
  bool active_ = false;
};

}  // namespace

Status DecodeInScalars(const wire::FunctionInterface &iface, const wire::Args &args,
                       std::vector<ScalarSlot> *slots, std::vector<int64_t> *values) {
  const int nparams = iface.params_size();
  slots->assign(static_cast<std::size_t>(nparams), ScalarSlot());
  values->assign(static_cast<std::size_t>(nparams), 0);
  int next = 0;
  for (int i = 0; i < nparams; ++i) {
    const wire::Param &p = iface.params(i);
    if (!IsInScalar(p)) continue;
    if (next >= args.scalars_size())
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    "too few scalar arguments: '" + p.name() + "' is missing");
    NINF_RETURN_IF_ERROR(DecodeScalar(p, args.scalars(next++), &(*slots)[i], &(*values)[i]));
  }
  if (next != args.scalars_size())
    return Status(NINF_ERR_ARGUMENT_MISMATCH, "too many scalar arguments for " + Signature(iface));
  return Status::Ok();
}

void CallServer::Report(ControlMsg msg, int pass_fd) {
  msg.call_id = handoff_.call_id;
  // ninfd may already be gone (shutdown); the call itself is unaffected.
  std::lock_guard<std::mutex> lock(report_mutex_);
  (void)SendControl(control_fd_, msg, pass_fd);
}

int CallServer::OfferLeasePage() {
  // Only over a Unix-domain channel: a TCP one (an executable on another
  // host) passes no descriptors, and shares no memory with ninfd.
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (lease_.valid() || lease_offered_) return -1;
  lease_offered_ = true;          // once: a channel that cannot share one never will
  if (redirect_listener_ >= 0 ||  // the channel is a bridge to ninfd on another host
      ::getsockname(control_fd_, reinterpret_cast<sockaddr *>(&addr), &len) != 0 ||
      addr.ss_family != AF_UNIX || !SlotLease::Create(&lease_).ok())
    return -1;
  return lease_.fd();
}

Status CallServer::WaitForSlot(Channel &ch, ControlMsg want) {
  want.kind = CTL_WANT_SLOT;
  Report(want);
  ControlMsg answer;
  NINF_RETURN_IF_ERROR(AwaitAnswer(ch, CTL_SLOT, &answer));
  // The scheduler may give this call other threads than the last one.
  handoff_.queue_seconds = answer.queue_seconds;
  if (answer.threads > 0) handoff_.threads = answer.threads;
  ApplyThreadBudget(ThreadsPerRank(handoff_.threads, team_));
  return Status::Ok();
}

Status CallServer::WaitForRoom(Channel &ch, uint64_t payload_bytes) {
  Report({.kind = CTL_ARRIVING, .flags = kArrivingAsksRoom, .bytes_in = payload_bytes});
  ControlMsg answer;
  return AwaitAnswer(ch, CTL_ROOM, &answer);
}

Status CallServer::AwaitAnswer(Channel &ch, uint32_t kind, ControlMsg *answer) {
  wire::Heartbeat beat;
  const int period = handoff_.heartbeat_ms ? static_cast<int>(handoff_.heartbeat_ms) : -1;
  for (;;) {
    pollfd p{control_fd_, POLLIN, 0};
    int r = ::poll(&p, 1, period);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Status(NINF_ERR_INTERNAL, std::string("poll: ") + std::strerror(errno));
    if (r == 0) {  // still waiting: the client hears that the call is alive
      NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_HEARTBEAT, &beat));
      continue;
    }
    int got = RecvControl(control_fd_, answer, nullptr);
    if (got != 1) return Status(NINF_ERR_SERVER, "ninfd went away before the call could start");
    if (answer->kind == CTL_PROBE) {
      // The client shut its write side while the call waits: a beat now
      // tells a closed client (a reset) from a half-closed one.
      NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_HEARTBEAT, &beat));
      continue;
    }
    if (answer->kind != kind) continue;
    if (answer->error_code == NINF_OK) return Status::Ok();
    // The answer carries a code only: each refusal ninfd makes here has its
    // own code, and the client is told what it means.
    const int code = answer->error_code;
    const char *why = code == NINF_ERR_SHUTTING_DOWN ? "the server is shutting down"
                      : code == NINF_ERR_AUTH
                          ? "ninfd refused the handle's next call: its user was revoked (the "
                            "key it proved is no longer the server's)"
                      : code == NINF_ERR_DENIED
                          ? "ninfd refused the handle's next call: the function's allow list "
                            "no longer names its user"
                      : code == NINF_ERR_LIMIT
                          ? "ninfd refused the call: its user has its quota of calls waiting "
                            "(max_queued / user_max_queued)"
                          : "server busy: no job slot for the call (queue_limit)";
    return Status(ErrorFromWire(code), why);
  }
}

void CallServer::FailCall(Channel &ch, uint64_t unread_bytes, const Status &st, ControlMsg *done) {
  std::fprintf(stderr, "ninf executable %s (call %llu): %s\n", iface_.name().c_str(),
               static_cast<unsigned long long>(handoff_.call_id), st.ToString().c_str());
  done->error_code = st.code();
  if (submitted_) {  // the client has its ticket and left: the collector hears it
    wire::Error err;
    EncodeError(st, &err);
    int fd = -1;
    uint64_t bytes = 0;
    if (FrameToMemfd(FRAME_ERROR, err, {}, &fd, &bytes).ok())
      (void)KeepOnServer(control_fd_, handoff_.call_id, kKeepWholeResult, fd, bytes, nullptr,
                         nullptr);
    return;
  }
  (void)ch.SendError(st);
  if (unread_bytes) DrainBeforeClose(ch, unread_bytes);
}

Status CallServer::ServeCall(Channel &ch, const FrameHeader &h, bool slot_after_arrival,
                             ControlMsg *done) {
  const double t_start = Now();
  const uint64_t in_before = ch.bytes_received();
  Call call;
  NINF_RETURN_IF_ERROR(DecodeCall(ch, h, &call, done));
  NINF_RETURN_IF_ERROR(ReceiveArrays(ch, &call));
  const double t_received = Now();
  // Admitted after arrival: the arguments are in memory and the call holds
  // no slot yet; it asks now, with what the queue orders by, and the wait
  // is neither transfer nor computation.
  double t_slot = t_received;
  if (slot_after_arrival) {
    uint64_t result_bytes = 0;
    for (const ParamPlan &pp : call.plan.params)
      if (pp.destination == Destination::kSocket || pp.destination == Destination::kCollector)
        result_bytes += pp.bytes;
    NINF_RETURN_IF_ERROR(WaitForSlot(ch, {.bytes_in = ch.bytes_received() - in_before,
                                          .bytes_out = result_bytes,
                                          .recv_seconds = t_received - t_start,
                                          .work_flops = done->work_flops}));
    t_slot = Now();
  }
  // ninfd hears first: a two-phase client leaves once it has its ticket,
  // and its hang-up must find ninfd told that the call no longer needs it
  // (else the hang-up reads as a cancel and the call is killed). A call on
  // the kept slot says it in the lease page, which wakes nobody.
  if (leased_call_)
    lease_.SetPhase(kLeasePhaseComputing);
  else
    Report({.kind = CTL_ARGS_RECEIVED, .work_flops = done->work_flops});
  if (call.plan.two_phase) NINF_RETURN_IF_ERROR(SendTicket(ch));
  NINF_RETURN_IF_ERROR(Invoke(ch, &call));
  const double t_computed = Now();

  wire::Result result;
  NINF_RETURN_IF_ERROR(KeepResults(call, &result));
  if (leased_call_)
    lease_.SetPhase(kLeasePhaseReplying);
  else if (!call.plan.two_phase)
    Report({.kind = CTL_REPLYING});
  wire::ServerTimes *times = result.mutable_server_times();
  times->set_queue_seconds(handoff_.queue_seconds);
  times->set_recv_seconds(t_received - t_start);
  times->set_compute_seconds(t_computed - t_slot);
  times->set_threads(handoff_.threads);
  NINF_RETURN_IF_ERROR(Reply(ch, call, &result));

  done->recv_seconds = t_received - t_start;
  done->compute_seconds = t_computed - t_slot;
  done->send_seconds = Now() - t_computed;
  return Status::Ok();
}

Status CallServer::DecodeCall(Channel &ch, const FrameHeader &h, Call *call, ControlMsg *done) {
  NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &call->args));
  // IN scalars: decode, and keep integer values for the dimensions.
  std::vector<int64_t> values;
  NINF_RETURN_IF_ERROR(DecodeInScalars(iface_, call->args, &call->slots, &values));
  NINF_RETURN_IF_ERROR(ComputeLayout(iface_, values, handoff_.max_call_bytes, &call->layout));
  // The call's size in the IDL's CalcOrder, for ninfd's load reports to a
  // metaserver (an expression that fails here only loses that figure).
  if (int64_t order = 0; iface_.calc_order().nodes_size() > 0 &&
                         EvalExpr(iface_, iface_.calc_order(), values, &order).ok())
    done->work_flops = static_cast<double>(order);
  const CallRequest request{.payload_bytes = h.payload_length,
                            .two_phase = handoff_.store_id != 0,
                            .redirected = redirect_listener_ >= 0,
                            .team = Shares(team_)};
  return PlanCall(iface_, call->layout, call->args, request, &call->plan);
}

Status CallServer::ReadyBuffer(int i, const ParamPlan &pp, std::vector<iovec> *incoming) {
  Buffer &buffer = buffers_[static_cast<std::size_t>(i)];
  // What the routine leaves unwritten of an OUT array goes back as it is:
  // zero, or this connection's own earlier result (buffer.h), never stale
  // memory of the process.
  if (!buffer.Reserve(pp.bytes))
    return Status(NINF_ERR_NO_MEMORY, "cannot allocate " + std::to_string(pp.bytes) +
                                          " bytes for '" + iface_.params(i).name() + "'");
  // Bytes that a previous client of this process left: received over
  // (IN, INOUT) or zeroed (OUT, WORK) before the routine runs. (A receive
  // that fails half way fails the call, and a process whose call failed
  // is never reused.)
  if (pp.source == Source::kBlank) {
    buffer.ClearUpTo(pp.bytes);
    return Status::Ok();
  }
  if (pp.source == Source::kSocket) incoming->push_back({buffer.data(), pp.bytes});
  buffer.Overwritten(pp.bytes);
  return Status::Ok();
}

Status CallServer::PlaceArguments(Call *call, std::vector<iovec> *incoming) {
  const int nparams = iface_.params_size();
  buffers_.resize(static_cast<std::size_t>(nparams));
  call->argv.assign(static_cast<std::size_t>(nparams), nullptr);
  for (int i = 0; i < nparams; ++i) {
    const ParamPlan &pp = call->plan.params[i];
    switch (pp.source) {
      case Source::kScalar:
        call->argv[i] = call->slots[i].Pointer();
        break;
      case Source::kSegment:  // in place, in the client's segment
        call->argv[i] = segment_.data() + pp.segment_offset;
        break;
      case Source::kSocket:
      case Source::kStoreRef:
      case Source::kBlank:
        NINF_RETURN_IF_ERROR(ReadyBuffer(i, pp, incoming));
        call->argv[i] = buffers_[i].data();
        break;
    }
  }
  return Status::Ok();
}

Status CallServer::ReceiveArrays(Channel &ch, Call *call) {
  if (call->plan.shared) NINF_RETURN_IF_ERROR(AttachSegment(ch, call->plan.segment_bytes));
  // Arrays go straight from the socket into their final buffers, which the
  // calls of a function handle reuse (warm pages, no faults, no zeroing).
  std::vector<iovec> incoming;
  NINF_RETURN_IF_ERROR(PlaceArguments(call, &incoming));
  // Beats while the bytes arrive: a client that wrote its last byte into a
  // slow link's buffers waits for the RESULT while they drain, and hears
  // the call is alive (its timeout counts only what it reads).
  NINF_RETURN_IF_ERROR(ch.RecvPayload(incoming, handoff_.heartbeat_ms));
  for (std::size_t i = 0; i < call->plan.params.size(); ++i) {
    const ParamPlan &pp = call->plan.params[i];
    // Server to server, never through the client.
    if (pp.source == Source::kStoreRef)
      NINF_RETURN_IF_ERROR(FetchKept(*pp.ref, FetchAuthority(), buffers_[i].data()));
  }
  return Status::Ok();
}

FetchAuth CallServer::FetchAuthority() const {
  FetchAuth auth{.control_fd = control_fd_, .call_id = handoff_.call_id, .key_id = {}};
  if (handoff_.flags & kHandoffKeyed)
    auth.key_id.assign(reinterpret_cast<const char *>(handoff_.key_id), sizeof handoff_.key_id);
  return auth;
}

Status CallServer::SendTicket(Channel &ch) {
  wire::Submitted ticket;
  ticket.set_id(handoff_.store_id);
  ticket.set_token(handoff_.token, sizeof handoff_.token);
  ticket.set_expires_seconds(handoff_.store_seconds);
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_SUBMITTED, &ticket));
  submitted_ = true;
  return Status::Ok();
}

Status CallServer::Invoke(Channel &ch, Call *call) {
  CpuBudget budget(handoff_.cpu_seconds);
  heartbeats_.Start(ch, handoff_.heartbeat_ms);
  Status shared_call = Status::Ok();
  if (call->plan.team) {  // the other ranks run the routine beside this one
    wire::Args scalars;
    *scalars.mutable_scalars() = call->args.scalars();
    shared_call = ShareCall(team_, iface_, scalars, ThreadsPerRank(handoff_.threads, team_),
                            calls_ == 0, call->argv, call->layout);
  }
  if (shared_call.ok()) invoke_(call->argv.data());
  heartbeats_.Stop();
  return shared_call;
}

Status CallServer::KeepResults(const Call &call, wire::Result *result) {
  for (std::size_t i = 0; i < call.plan.params.size(); ++i) {
    const ParamPlan &pp = call.plan.params[i];
    if (pp.destination != Destination::kKeep) continue;
    int fd = -1;
    uint64_t id = 0;
    std::string token;
    NINF_RETURN_IF_ERROR(BytesToMemfd(buffers_[i].data(), pp.bytes, &fd));
    NINF_RETURN_IF_ERROR(KeepOnServer(control_fd_, handoff_.call_id, static_cast<uint32_t>(i), fd,
                                      pp.bytes, &id, &token));
    wire::DataRef *kept = result->add_kept();
    kept->set_param(static_cast<uint32_t>(i));
    kept->set_id(id);
    kept->set_token(token);
    kept->set_bytes(pp.bytes);
  }
  return Status::Ok();
}

Status CallServer::Reply(Channel &ch, const Call &call, wire::Result *result) {
  std::vector<iovec> outgoing;
  for (std::size_t i = 0; i < call.plan.params.size(); ++i) {
    const ParamPlan &pp = call.plan.params[i];
    switch (pp.destination) {
      case Destination::kSocket:
      case Destination::kCollector:
        outgoing.push_back({buffers_[i].data(), pp.bytes});
        break;
      case Destination::kNone:
      case Destination::kSegment:
      case Destination::kKeep:
        break;
    }
  }
  // A shared call's `outgoing` is empty: the results are in place.
  result->set_shared_memory(call.plan.shared);
  if (!call.plan.two_phase) return ch.SendFrame(FRAME_RESULT, result, outgoing);
  // Kept for the collector, exactly as it would have been sent.
  int fd = -1;
  uint64_t bytes = 0;
  NINF_RETURN_IF_ERROR(FrameToMemfd(FRAME_RESULT, *result, outgoing, &fd, &bytes));
  return KeepOnServer(control_fd_, handoff_.call_id, kKeepWholeResult, fd, bytes, nullptr, nullptr);
}

Status CallServer::AttachSegment(Channel &ch, uint64_t bytes) {
  if (!ch.local())
    return Status(NINF_ERR_PROTOCOL, "shared memory asked for on a network connection");
  const int fd = ch.TakeReceivedFd();
  if (fd < 0) {
    if (!segment_.valid())
      return Status(NINF_ERR_PROTOCOL, "no shared segment came with the call's arguments");
  } else if (segment_.Same(fd) && segment_.size() >= bytes) {
    ::close(fd);  // the client's segment again: already mapped
  } else {
    NINF_RETURN_IF_ERROR(SharedSegment::Map(fd, bytes, &segment_));
  }
  if (segment_.size() < bytes)
    return Status(NINF_ERR_PROTOCOL, "the shared segment is smaller than the call's arrays");
  return Status::Ok();
}

bool CallServer::WaitForHandoff(int *client_fd) {
  for (;;) {
    *client_fd = -1;
    ControlMsg msg;
    const int r = RecvControl(control_fd_, &msg, client_fd);
    if (r < 0 && errno == EINTR) continue;
    const bool redirected = redirect_listener_ >= 0 && *client_fd < 0;
    if (r == 1 && msg.kind == CTL_HANDOFF && (*client_fd >= 0 || redirected)) {
      handoff_ = msg;
      return true;
    }
    if (*client_fd >= 0) ::close(*client_fd);
    // A probe or a slot answer meant for the previous call can arrive late;
    // anything else means ninfd is gone or broken.
    if (r == 1 && (msg.kind == CTL_PROBE || msg.kind == CTL_SLOT)) continue;
    return false;
  }
}

bool CallServer::UsesThreads() {
  return openblas_set_num_threads != nullptr || omp_set_num_threads != nullptr;
}

void CallServer::ApplyThreadBudget(uint32_t threads) {
  if (threads == 0) return;
  // Weak references, not links: most routines use neither library, and a
  // reused or pre-started process must take each call's budget, whatever its
  // environment said when it started. A weak reference resolves to whatever
  // defines it in the executable (linked statically) or its libraries, and
  // is null otherwise; dlsym would see nothing in a static executable.
  if (openblas_set_num_threads) openblas_set_num_threads(static_cast<int>(threads));
  if (omp_set_num_threads) omp_set_num_threads(static_cast<int>(threads));
}

Status CallServer::ServeFrame(Channel &ch, const FrameHeader &h, ControlMsg *done) {
  if (h.type != FRAME_ARGS)
    return Status(NINF_ERR_PROTOCOL, std::string("expected ARGS, got ") + FrameTypeName(h.type));
  // How this call comes by its slot (call_plan.h PlanSlot). A handle's next
  // call on the slot its last call kept says no word to ninfd
  // (protocol/slot_lease.h); Begin() claims the kept slot, so it is asked
  // only of a later call.
  leased_call_ = calls_ > 0 && lease_.Begin();
  const bool arguments_first =
      (handoff_.flags & (calls_ > 0 ? kHandoffLaterArgsFirst : kHandoffArgsFirst)) != 0;
  const SlotPlan slot =
      PlanSlot({.arguments_first = arguments_first,
                .later_call = calls_ > 0,
                .leased = leased_call_,
                .arguments_in =
                    arguments_first && ch.Arrived(uint64_t{h.header_length} + h.payload_length)});
  if (slot.no_wait) handoff_.queue_seconds = 0;
  // A handle's next call: ninfd hears that its arguments are coming (the
  // executable is no longer idle, and their progress is watched), and
  // counts them under its arrival bounds, first giving them room if they
  // are still on their way.
  Status st = Status::Ok();
  if (slot.ask_room)
    st = WaitForRoom(ch, h.payload_length);
  else if (slot.report_arriving)
    Report({.kind = CTL_ARRIVING, .bytes_in = h.payload_length});
  switch (slot.step) {
    case SlotStep::kHeld:
    case SlotStep::kAskAfterArguments:  // ServeCall asks once they are in
      break;
    case SlotStep::kAskBeforeArguments:
      if (st.ok()) st = WaitForSlot(ch, {});
      break;
  }
  if (st.ok()) st = ServeCall(ch, h, slot.step == SlotStep::kAskAfterArguments, done);
  ++calls_;
  return st;
}

Status CallServer::AcceptTls(Channel &ch, int client_fd) {
  // ninfd gave the client the same key inside its own TLS session
  // (FRAME_HANDOVER); the client's handshake comes next on this socket.
  tls::Psk psk;
  std::memcpy(psk.data(), handoff_.psk, psk.size());
  std::memset(handoff_.psk, 0, sizeof handoff_.psk);  // used once
  tls::SslPtr ssl;
  Status st =
      tls::PskAccept(client_fd, psk, tls::PskKeyExchange::kKeyAlone, kHandoverHandshakeMs, &ssl);
  std::memset(psk.data(), 0, psk.size());
  if (st.ok()) ch.UseTls(std::move(ssl));
  return st;
}

void CallServer::ReportCallDone(ControlMsg done, bool offer_lease) {
  // A routine without OpenBLAS or OpenMP runs on one thread whatever it
  // is granted: ninfd's adaptive budget then gives its calls one core.
  // A team's ranks hold the cores they were granted, threads or not.
  done.threads = UsesThreads() || Shares(team_) ? 0 : 1;
  done.peak_rss_bytes = peak_.PeakBytes();  // the client has its answer already
  // The kept slot is kept, or given back if ninfd asked for it meanwhile,
  // before ninfd hears the call is done (it reads the page then).
  if (leased_call_) (void)lease_.End();
  leased_call_ = false;
  // A handle's first call done offers ninfd the page its later calls may
  // find a kept slot in (slot_lease.h).
  Report(done, offer_lease && !lease_.valid() ? OfferLeasePage() : -1);
}

int CallServer::StartSession(Channel &ch, int client_fd) {
  // ninfd keeps its sockets non-blocking; this process does blocking I/O.
  // Over TLS the channel polls a non-blocking socket (wire.h).
  const bool tls = handoff_.flags & kHandoffTls;
  const int flags = ::fcntl(client_fd, F_GETFL);
  if (flags < 0 ||
      ::fcntl(client_fd, F_SETFL, tls ? flags | O_NONBLOCK : flags & ~O_NONBLOCK) < 0) {
    std::perror("ninf executable: fcntl on the client socket");
    return 2;
  }
  if (!tls) return 0;
  if (redirected_tls_) {  // the session AcceptRedirected ran
    ch.UseTls(std::move(redirected_tls_));
    return 0;
  }
  if (Status st = AcceptTls(ch, client_fd); !st.ok()) {
    std::fprintf(stderr, "ninf executable %s: %s\n", iface_.name().c_str(), st.ToString().c_str());
    Report({.kind = CTL_CALL_DONE, .error_code = st.code()});
    return 1;
  }
  return 0;
}

int CallServer::Serve(int client_fd) {
  Channel ch(client_fd);  // owns it from here
  if (const int failed = StartSession(ch, client_fd); failed != 0) return failed;
  const bool persistent = handoff_.flags & kHandoffPersistent;
  const uint64_t max_payload = handoff_.max_call_bytes ? handoff_.max_call_bytes : UINT64_MAX;
  calls_ = 0;

  int exit_status = 0;
  for (;;) {
    FrameHeader h;
    uint64_t in_before = ch.bytes_received(), out_before = ch.bytes_sent();
    peak_.Reset();  // while the client has not sent the call yet
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
    submitted_ = false;
    st = ServeFrame(ch, h, &done);
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
    ReportCallDone(done, persistent && st.ok());
    if (!st.ok() || !persistent) break;
  }
  return exit_status;
}

int CallServer::Run() {
  // A warm executable starts ahead of its call: OpenSSL's start-up (about a
  // millisecond: config, providers, DRBG seeding, SSL_CTX_new's algorithm
  // fetches) is done here, off the call path, when ninfd speaks TLS.
  if (const char *t = std::getenv(kExecutableTlsEnv); t && std::strcmp(t, "1") == 0) tls::WarmUp();
  for (bool first = true;; first = false) {
    int client_fd = -1;
    if (!WaitForHandoff(&client_fd)) {
      // Between calls, a closed channel is ninfd retiring this process.
      if (!first) return 0;
      std::fprintf(stderr, "ninf executable %s: no call was handed over by ninfd\n",
                   iface_.name().c_str());
      return 2;
    }
    if (client_fd < 0) {
      // Redirected: the client connects to us with the call's token.
      constexpr uint32_t kDefaultWaitMs = 10000;
      const uint32_t wait = handoff_.redirect_wait_ms ? handoff_.redirect_wait_ms : kDefaultWaitMs;
      // Over TLS its session is keyed by the HANDOFF's psk (ninfd sent the
      // client the same key inside its own session).
      tls::Psk psk;
      const bool tls = handoff_.flags & kHandoffTls;
      if (tls) {
        std::memcpy(psk.data(), handoff_.psk, psk.size());
        std::memset(handoff_.psk, 0, sizeof handoff_.psk);  // used once
      }
      Status st = AcceptRedirected(redirect_listener_, handoff_.redirect_token,
                                   sizeof handoff_.redirect_token, static_cast<int>(wait),
                                   &client_fd, tls ? &psk : nullptr, &redirected_tls_);
      std::memset(psk.data(), 0, psk.size());
      if (!st.ok()) {
        std::fprintf(stderr, "ninf executable %s: %s\n", iface_.name().c_str(),
                     st.ToString().c_str());
        Report({.kind = CTL_CALL_DONE, .error_code = st.code()});
        // No client byte was read: a reusable process is as good as before,
        // and a client that never follows its redirect costs no MPI restart.
        if (!(handoff_.flags & kHandoffReusable)) return 1;
        Report({.kind = CTL_RELEASED});
        continue;
      }
    }
    ApplyThreadBudget(ThreadsPerRank(handoff_.threads, team_));
    const int status = Serve(client_fd);  // the socket is closed when it returns
    segment_ = SharedSegment();           // and the client's memory unmapped
    // A failed call may have left the process in any state: it is not reused.
    if (status != 0 || !(handoff_.flags & kHandoffReusable)) return status;
    for (Buffer &b : buffers_) b.Disown();
    Report({.kind = CTL_RELEASED});
  }
}

}  // namespace ninf::stub
