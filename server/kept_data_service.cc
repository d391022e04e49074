// KeptDataService: kept data over the DataStore (kept_data_service.h,
// docs/transactions.md).
#include "server/kept_data_service.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <utility>

#include "daemon/log.h"
#include "ninf.pb.h"
#include "server/random_bytes.h"

namespace ninf::server {
namespace {

// A token is the capability to read an entry: unguessable bytes.
std::string RandomToken() { return RandomBytes(kStoreTokenSize); }

static_assert(kControlKeyIdSize == auth::kKeyIdSize);
static_assert(kControlNonceSize == auth::kNonceSize && kControlNonceSize == auth::kProofSize);

// Entries up to this size are read into ninfd's memory at once, and their
// memfd closed: the bytes cost the same memory either way (a memfd is
// memory too), and a descriptor less. Larger ones stay memfds while the
// descriptor budget lasts, so that the loop does not copy them.
constexpr uint64_t kInMemoryBytes = uint64_t{1} << 20;

// How many entries may hold a descriptor: a quarter of the descriptor
// limit, so that kept data never takes the descriptors calls need.
uint64_t DescriptorBudget() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 1024;
  return std::max<uint64_t>(8, static_cast<uint64_t>(lim.rlim_cur) / 4);
}

// Reads `bytes` bytes of a memfd from offset 0, appended to *out.
Status ReadFd(int fd, uint64_t bytes, std::string *out) {
  const std::size_t at = out->size();
  out->resize(at + bytes);
  uint64_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd, out->data() + at + done, bytes - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status(NINF_ERR_INTERNAL, std::string("reading kept data: ") +
                                           (n < 0 ? std::strerror(errno) : "short file"));
    done += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

// Appends a ready entry's bytes to *out.
Status ReadKept(const DataStore::Entry &e, std::string *out) {
  if (e.file.get() < 0) {
    out->append(e.memory);
    return Status::Ok();
  }
  return ReadFd(e.file.get(), e.bytes, out);
}

bool ParseKey(std::string_view body, wire::StoreKey *key) {
  return key->ParseFromArray(body.data(), static_cast<int>(body.size()));
}

}  // namespace

KeptDataService::KeptDataService(const Settings &settings, const UserPolicy &users,
                                 Clock::time_point epoch)
    : settings_(settings),
      users_(users),
      epoch_(epoch),
      store_(static_cast<uint64_t>(settings.store_bytes), DescriptorBudget()) {}

Status KeptDataService::Reserve(const std::string &owner, const std::string &token,
                                DataStore::Kind kind, uint64_t bytes, double ttl_seconds,
                                uint64_t *id) {
  const UserQuota quota = users_.QuotaOf(owner);
  store_.set_owner_caps({.entries = static_cast<uint64_t>(quota.store_entries),
                         .bytes = static_cast<uint64_t>(quota.store_bytes),
                         .results = static_cast<uint64_t>(quota.two_phase)});
  return store_.Reserve(owner, token, kind, bytes, ttl_seconds, Now(), id);
}

Status KeptDataService::FillFrom(uint64_t id, daemon::UniqueFd data, uint64_t bytes) {
  // More than was reserved is refused before anything is copied.
  if (const DataStore::Entry *e = store_.Get(id); e && bytes > e->bytes) {
    Status st(NINF_ERR_TOO_LARGE, "kept data " + std::to_string(id) + " got " +
                                      std::to_string(bytes) + " bytes, reserved " +
                                      std::to_string(e->bytes));
    store_.Release(id);
    return st;
  }
  if (bytes > kInMemoryBytes && store_.HasDescriptorRoom())
    return store_.Fill(id, std::move(data), bytes);
  std::string memory;
  if (Status st = ReadFd(data.get(), bytes, &memory); !st.ok()) {
    store_.Release(id);
    return st;
  }
  return store_.Fill(id, std::move(memory));
}

double KeptDataService::Now() const {
  return std::chrono::duration<double>(Clock::now() - epoch_).count();
}

void KeptDataService::Expire() {
  if (std::size_t n = store_.Expire(Now()); n > 0) spdlog::info("event=kept_expired entries={}", n);
}

void KeptDataService::AddGauges(Gauges *g) const {
  const DataStore::Counts &kept = store_.counts();
  g->store_entries = kept.entries;
  g->store_bytes = kept.bytes;
  g->store_cap = store_.cap_bytes();
  g->store_stored = kept.stored;
  g->store_refused = kept.refused;
  g->store_expired = kept.expired;
  g->store_released = kept.released;
  g->store_served_bytes = served_bytes_;
  g->store_descriptors = kept.descriptors;
}

Status KeptDataService::ReserveResult(uint64_t keep_bytes, CallParams *params) {
  if (params->persistent)
    return Status(NINF_ERR_INVALID_ARGUMENT, "a function handle's calls cannot be two-phase");
  const uint64_t limit = settings_.max_call_bytes > 0
                             ? static_cast<uint64_t>(settings_.max_call_bytes) + (1u << 20)
                             : UINT64_MAX;
  if (keep_bytes == 0 || keep_bytes > limit)
    return Status(NINF_ERR_TOO_LARGE,
                  "a two-phase call must name the room its result needs, at "
                  "most the per-call maximum (asked " +
                      std::to_string(keep_bytes) + " bytes)");
  std::string token = RandomToken();
  if (token.empty()) return Status(NINF_ERR_INTERNAL, "no random bytes for a ticket");
  uint64_t id = 0;
  NINF_RETURN_IF_ERROR(Reserve(params->owner, token, DataStore::Kind::kResult, keep_bytes,
                               static_cast<double>(settings_.result_keep_seconds), &id));
  params->store_id = id;
  params->token = std::move(token);
  params->store_seconds = static_cast<double>(settings_.result_keep_seconds);
  params->heartbeat_ms = 0;  // the client leaves once it has its ticket
  return Status::Ok();
}

void KeptDataService::HandleCollect(daemon::Connection &conn, std::string_view body) {
  wire::StoreKey key;
  if (!ParseKey(body, &key)) {
    conn.Fail(Status(NINF_ERR_PROTOCOL, "malformed COLLECT message"));
    return;
  }
  const DataStore::Entry *entry = nullptr;
  Status st = store_.Find(key.id(), key.token(), users_.Of(conn).user, DataStore::Kind::kResult,
                          Now(), &entry);
  if (!st.ok()) {
    spdlog::info("event=collect_refused conn={} peer={} user={} id={} error={}", conn.id(),
                 conn.peer(), ShownUser(users_.Of(conn).user), key.id(),
                 daemon::Quoted(st.message()));
    conn.Fail(st);
    return;
  }
  if (entry->state == DataStore::State::kPending) {  // an answer, not an end: ask again
    wire::Error err;
    EncodeError(
        Status(NINF_ERR_NOT_READY, "call " + std::to_string(key.id()) + " is still running"), &err);
    conn.Reply(FRAME_ERROR, &err);
    return;
  }
  std::string frames;
  if (st = ReadKept(*entry, &frames); !st.ok()) {
    conn.Fail(st);
    return;
  }
  // A result is collected once (docs/transactions.md): the entry is freed
  // as it is sent, and a second COLLECT finds nothing.
  store_.Release(key.id());
  served_bytes_ += frames.size();
  spdlog::info("event=collect conn={} peer={} user={} id={} bytes={}", conn.id(), conn.peer(),
               ShownUser(users_.Of(conn).user), key.id(), frames.size());
  conn.ReplyBytes(std::move(frames));
}

void KeptDataService::HandleRelease(daemon::Connection &conn, std::string_view body) {
  wire::StoreKey key;
  if (!ParseKey(body, &key)) {
    conn.Fail(Status(NINF_ERR_PROTOCOL, "malformed RELEASE message"));
    return;
  }
  const DataStore::Entry *entry = store_.Get(key.id());
  const DataStore::Kind kind = entry ? entry->kind : DataStore::Kind::kArray;
  Status st = store_.Find(key.id(), key.token(), users_.Of(conn).user, kind, Now(), &entry);
  if (st.code() == NINF_ERR_AUTH) {
    conn.Fail(st);
    return;
  }
  // Releasing what is gone already (collected, expired) is no error.
  wire::Released reply;
  reply.set_found(st.ok() && store_.Release(key.id()));
  conn.Reply(FRAME_RELEASED, &reply);
}

void KeptDataService::HandleFetch(daemon::Connection &conn, std::string_view body) {
  wire::StoreKey key;
  if (!ParseKey(body, &key)) {
    conn.Fail(Status(NINF_ERR_PROTOCOL, "malformed FETCH message"));
    return;
  }
  const DataStore::Entry *entry = nullptr;
  Status st = store_.Find(key.id(), key.token(), users_.Of(conn).user, DataStore::Kind::kArray,
                          Now(), &entry);
  if (st.ok() && entry->state == DataStore::State::kPending)
    st = Status(NINF_ERR_INVALID_ID, "kept data " + std::to_string(key.id()) + " is not ready");
  std::string frame;
  if (st.ok()) {
    wire::Data data;
    AppendFrame(&frame, FRAME_DATA, &data, entry->bytes);
    st = ReadKept(*entry, &frame);  // the payload, behind its header
  }
  if (!st.ok()) {
    spdlog::info("event=fetch_refused conn={} peer={} user={} id={} error={}", conn.id(),
                 conn.peer(), ShownUser(users_.Of(conn).user), key.id(),
                 daemon::Quoted(st.message()));
    conn.Fail(st);
    return;
  }
  served_bytes_ += entry->bytes;
  spdlog::debug("event=fetch conn={} peer={} id={} bytes={}", conn.id(), conn.peer(), key.id(),
                entry->bytes);
  conn.ReplyBytes(std::move(frame));
}

void KeptDataService::OnKeep(Job &job, const ControlMsg &msg, daemon::UniqueFd data) {
  struct stat sb {};
  const bool sized =
      ::fstat(data.get(), &sb) == 0 && static_cast<uint64_t>(sb.st_size) >= msg.bytes_out;
  if (msg.param == kKeepWholeResult) {
    if (!job.params().two_phase()) return;
    Status st = sized ? FillFrom(job.params().store_id, std::move(data), msg.bytes_out)
                      : Status(NINF_ERR_PROTOCOL, "the result's memfd is shorter than announced");
    spdlog::info("event=result_kept job={} call={} function={} user={} id={} bytes={} error={}",
                 job.id(), job.params().call_id, job.params().function,
                 ShownUser(job.params().owner), job.params().store_id, msg.bytes_out,
                 daemon::Quoted(st.ok() ? "-" : st.message()));
    if (!st.ok()) SettleResult(job, st);
    return;
  }
  std::string token = RandomToken();
  uint64_t id = 0;
  Status st = !sized ? Status(NINF_ERR_PROTOCOL, "the kept array's memfd is shorter than announced")
              : token.empty()
                  ? Status(NINF_ERR_INTERNAL, "no random bytes for a token")
                  : Reserve(job.params().owner, token, DataStore::Kind::kArray, msg.bytes_out,
                            static_cast<double>(settings_.data_keep_seconds), &id);
  if (st.ok()) st = FillFrom(id, std::move(data), msg.bytes_out);
  spdlog::debug("event=array_kept job={} call={} function={} param={} id={} bytes={} error={}",
                job.id(), job.params().call_id, job.params().function, msg.param, id, msg.bytes_out,
                daemon::Quoted(st.ok() ? "-" : st.message()));
  job.Tell(KeptAnswer(st, id, token));
}

void KeptDataService::SettleResult(Job &job, const Status &why) {
  assert(job.params().two_phase());  // the callers ask only of a two-phase call
  const uint64_t id = job.params().store_id;
  const DataStore::Entry *entry = store_.Get(id);
  if (!entry || entry->state != DataStore::State::kPending) return;
  if (job.conn()) {  // the client never got its ticket, and hears `why` now
    store_.Release(id);
    return;
  }
  // The ticket is out: its collector learns why there is no result.
  std::string frame;
  AppendErrorFrame(&frame, why.ok() ? Status(NINF_ERR_EXECUTABLE,
                                             "the call ended without handing over its result")
                                    : why);
  if (!store_.Fill(id, std::move(frame)).ok()) store_.Release(id);
}

void KeptDataService::OnProve(Job &job, const ControlMsg &msg) {
  // The key the call's client proved, while it is still its user's: a
  // revoked key proves nothing for the calls it started.
  const std::string &key_id = job.params().key_id;
  const auth::Key *key = users_.KeyOfCall(job.params().owner, key_id);
  auth::Nonce cn{}, sn{};
  std::memcpy(cn.data(), msg.client_nonce, cn.size());
  std::memcpy(sn.data(), msg.server_nonce, sn.size());
  Status st =
      !key ? Status(NINF_ERR_AUTH, key_id.empty() ? "the call has no key to authenticate with"
                                                  : "the call's key is no longer its user's here")
      : !auth::ProofMatches(
            auth::ServerProof(*key, cn, sn),
            std::string_view(reinterpret_cast<const char *>(msg.proof), sizeof msg.proof))
          ? Status(NINF_ERR_AUTH,
                   "the server named by the data reference did not prove that it "
                   "holds the caller's key")
          : Status::Ok();
  spdlog::debug("event=fetch_prove job={} call={} function={} error={}", job.id(),
                job.params().call_id, job.params().function,
                daemon::Quoted(st.ok() ? "-" : st.message()));
  if (!st.ok()) {
    job.Tell(ProvedAnswer(st, nullptr));
    return;
  }
  const auth::Proof proof = auth::ClientProof(*key, cn, sn);
  job.Tell(ProvedAnswer(st, proof.data()));
}

void KeptDataService::OnFetchAsk(Job &job, const ControlMsg &msg) {
  FetchPeers peers = peers_ ? peers_() : FetchPeers{};
  // fetch_from as it is now: a SIGHUP applies to the next reference.
  (void)ParseFetchFrom(settings_.fetch_from, &peers.configured);
  const std::string address(msg.fetch_address,
                            strnlen(msg.fetch_address, sizeof msg.fetch_address));
  const Status st = MayFetchFrom(address, peers);
  if (st.code() == NINF_ERR_TIMEOUT && refresh_) refresh_();  // the executable asks again
  if (st.code() == NINF_ERR_AUTH)
    daemon::RateLimitedWarn(
        "fetch_dial_refused",
        "event=fetch_dial_refused job={} call={} function={} user={} address={}", job.id(),
        job.params().call_id, job.params().function, daemon::Quoted(job.params().owner),
        daemon::Quoted(address));
  job.Tell(FetchAnswer(st));
}

}  // namespace ninf::server
