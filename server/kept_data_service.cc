// KeptDataService: kept data over the DataStore (kept_data_service.h,
// docs/transactions.md).
#include "server/kept_data_service.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

// Appends the first `bytes` bytes of a kept memfd to *out.
Status ReadKept(int fd, uint64_t bytes, std::string *out) {
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

// A memfd holding `bytes`, for a result that ninfd writes itself.
daemon::UniqueFd MemfdWith(const std::string &bytes) {
  daemon::UniqueFd fd(::memfd_create("ninf-kept", MFD_CLOEXEC));
  if (fd.get() < 0) return fd;
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return daemon::UniqueFd();
    done += static_cast<std::size_t>(n);
  }
  return fd;
}

bool ParseKey(std::string_view body, wire::StoreKey *key) {
  return key->ParseFromArray(body.data(), static_cast<int>(body.size()));
}

}  // namespace

std::string OwnerOf(daemon::Connection &conn) {
  return conn.auth().authenticated ? conn.auth().key_id : std::string();
}

KeptDataService::KeptDataService(const Settings &settings, Clock::time_point epoch)
    : settings_(settings), epoch_(epoch), store_(static_cast<uint64_t>(settings.store_bytes)) {}

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
  NINF_RETURN_IF_ERROR(store_.Reserve(params->owner, token, keep_bytes,
                                      static_cast<double>(settings_.result_keep_seconds), Now(),
                                      &id));
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
  Status st = store_.Find(key.id(), key.token(), OwnerOf(conn), Now(), &entry);
  if (!st.ok()) {
    spdlog::info("event=collect_refused conn={} peer={} id={} error={}", conn.id(), conn.peer(),
                 key.id(), daemon::Quoted(st.message()));
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
  if (st = ReadKept(entry->data.get(), entry->bytes, &frames); !st.ok()) {
    conn.Fail(st);
    return;
  }
  served_bytes_ += frames.size();
  spdlog::info("event=collect conn={} peer={} id={} bytes={}", conn.id(), conn.peer(), key.id(),
               frames.size());
  conn.ReplyBytes(std::move(frames));
}

void KeptDataService::HandleRelease(daemon::Connection &conn, std::string_view body) {
  wire::StoreKey key;
  if (!ParseKey(body, &key)) {
    conn.Fail(Status(NINF_ERR_PROTOCOL, "malformed RELEASE message"));
    return;
  }
  const DataStore::Entry *entry = nullptr;
  Status st = store_.Find(key.id(), key.token(), OwnerOf(conn), Now(), &entry);
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
  Status st = store_.FindByToken(key.id(), key.token(), Now(), &entry);
  if (st.ok() && entry->state == DataStore::State::kPending)
    st = Status(NINF_ERR_INVALID_ID, "kept data " + std::to_string(key.id()) + " is not ready");
  std::string frame;
  if (st.ok()) {
    wire::Data data;
    AppendFrame(&frame, FRAME_DATA, &data, entry->bytes);
    st = ReadKept(entry->data.get(), entry->bytes, &frame);  // the payload, behind its header
  }
  if (!st.ok()) {
    spdlog::info("event=fetch_refused conn={} peer={} id={} error={}", conn.id(), conn.peer(),
                 key.id(), daemon::Quoted(st.message()));
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
    if (!job.two_phase()) return;
    Status st = sized ? store_.Fill(job.params().store_id, std::move(data), msg.bytes_out)
                      : Status(NINF_ERR_PROTOCOL, "the result's memfd is shorter than announced");
    spdlog::info("event=result_kept job={} call={} function={} id={} bytes={} error={}", job.id(),
                 job.call_id(), job.function(), job.params().store_id, msg.bytes_out,
                 daemon::Quoted(st.ok() ? "-" : st.message()));
    if (!st.ok()) SettleResult(job, st);
    return;
  }
  std::string token = RandomToken();
  uint64_t id = 0;
  Status st = !sized ? Status(NINF_ERR_PROTOCOL, "the kept array's memfd is shorter than announced")
              : token.empty()
                  ? Status(NINF_ERR_INTERNAL, "no random bytes for a token")
                  : store_.Reserve(job.params().owner, token, msg.bytes_out,
                                   static_cast<double>(settings_.data_keep_seconds), Now(), &id);
  if (st.ok()) st = store_.Fill(id, std::move(data), msg.bytes_out);
  spdlog::debug("event=array_kept job={} call={} function={} param={} id={} bytes={} error={}",
                job.id(), job.call_id(), job.function(), msg.param, id, msg.bytes_out,
                daemon::Quoted(st.ok() ? "-" : st.message()));
  job.SendKept(st, id, token);
}

void KeptDataService::SettleResult(Job &job, const Status &why) {
  if (!job.two_phase()) return;
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
  daemon::UniqueFd fd = MemfdWith(frame);
  if (fd.get() < 0 || !store_.Fill(id, std::move(fd), frame.size()).ok()) store_.Release(id);
}

}  // namespace ninf::server
