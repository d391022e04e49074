#include "client/metaserver.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "client/connect.h"
#include "client/exchange.h"
#include "client/interfaces.h"
#include "client/options.h"
#include "protocol/ask.h"
#include "protocol/default_ports.h"
#include "protocol/layout.h"

namespace ninf::client {
namespace {

std::mutex g_metaserver_mutex;
std::optional<std::optional<ServerAddress>> g_meta;  // set by SetMetaserver
std::vector<ServerAddress> g_fallback;               // the config's [servers]
// Idle connections to each metaserver, by address key.
std::map<std::string, std::vector<std::unique_ptr<Channel>>> g_pool;
constexpr std::size_t kPoolPerMetaserver = 8;
// A metaserver answers from memory: an exchange that takes longer than
// this means it is gone or stuck, and the call should fall back.
constexpr int kMetaTimeoutMs = 10000;

std::unique_ptr<Channel> TakePooled(const ServerAddress &meta) {
  std::lock_guard<std::mutex> lock(g_metaserver_mutex);
  auto &pool = g_pool[meta.Key()];
  if (pool.empty()) return nullptr;
  std::unique_ptr<Channel> ch = std::move(pool.back());
  pool.pop_back();
  return ch;
}

void GiveBack(const ServerAddress &meta, std::unique_ptr<Channel> ch) {
  std::lock_guard<std::mutex> lock(g_metaserver_mutex);
  auto &pool = g_pool[meta.Key()];
  if (pool.size() < kPoolPerMetaserver) pool.push_back(std::move(ch));
}

// One request/reply with the metaserver, on a pooled connection if one is
// idle (the metaserver may have closed it meanwhile: then once more on a
// new one).
template <class Request>
Status Exchange(const ServerAddress &meta, const Request &request,
                typename Rpc<Request>::Reply *reply) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Channel> ch = attempt == 0 ? TakePooled(meta) : nullptr;
    const bool pooled = ch != nullptr;
    if (!ch) NINF_RETURN_IF_ERROR(ConnectToMetaserver(meta, &ch));
    ch->set_timeout_ms(kMetaTimeoutMs);
    Status st = Ask(*ch, request, reply);
    if (st.ok()) {
      GiveBack(meta, std::move(ch));
      return st;
    }
    // An answer (FRAME_ERROR) is final; a stale pooled connection is not.
    if (!pooled || !MetaserverUnreachable(st)) return st;
  }
  return Status(NINF_ERR_INTERNAL, "unreachable");
}

Status ProbeOnce(Channel &ch, uint64_t bytes, double *seconds) {
  static const std::string zeros(std::size_t{1} << 20, '\0');
  std::vector<iovec> payload;
  for (uint64_t left = bytes; left > 0;) {
    std::size_t n = static_cast<std::size_t>(std::min<uint64_t>(left, zeros.size()));
    payload.push_back({const_cast<char *>(zeros.data()), n});
    left -= n;
  }
  wire::Probe probe;
  wire::ProbeReply reply;
  FrameHeader h;
  const double start = MonotonicSeconds();
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_PROBE, &probe, payload));
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_PROBE_REPLY, 0, &reply, &h));
  *seconds = MonotonicSeconds() - start;
  return Status::Ok();
}

}  // namespace

bool ConfiguredMetaserver(ServerAddress *out, Status *error) {
  {
    std::lock_guard<std::mutex> lock(g_metaserver_mutex);
    if (g_meta) {
      if (*g_meta) *out = **g_meta;
      return g_meta->has_value();
    }
  }
  const char *env = std::getenv("NINF_METASERVER");
  if (!env || !*env) return false;
  Status st = ParseHostPort(env, HostPort{"", kMetaPort}, out);
  if (!st.ok()) {
    *error = Status(NINF_ERR_CONFIG, std::string("NINF_METASERVER: ") + st.message());
    return false;
  }
  return true;
}

void SetMetaserver(const std::optional<ServerAddress> &meta) {
  std::lock_guard<std::mutex> lock(g_metaserver_mutex);
  g_meta = meta;
}

std::string ClientSite() {
  const char *site = std::getenv("NINF_SITE");
  return site ? site : "";
}

std::vector<ServerAddress> FallbackServers() {
  std::vector<ServerAddress> out;
  ServerAddress def;
  if (DefaultServer(&def).ok()) out.push_back(def);
  std::lock_guard<std::mutex> lock(g_metaserver_mutex);
  for (const ServerAddress &s : g_fallback)
    if (std::none_of(out.begin(), out.end(),
                     [&s](const ServerAddress &o) { return o.Key() == s.Key(); }))
      out.push_back(s);
  return out;
}

void SetFallbackServers(std::vector<ServerAddress> servers) {
  std::lock_guard<std::mutex> lock(g_metaserver_mutex);
  g_fallback = std::move(servers);
}

bool MetaserverUnreachable(const Status &st) {
  return st.code() == NINF_ERR_CONNECT || st.code() == NINF_ERR_COMMUNICATION ||
         st.code() == NINF_ERR_TIMEOUT || st.code() == NINF_ERR_SHUTTING_DOWN;
}

bool RetryElsewhere(const Status &st) {
  switch (st.code()) {  // the elsewhere column of NINF_ERROR_MAP
#define ELSEWHERE_OF_(name, value, text, grpc, elsewhere) \
  case name:                                              \
    return elsewhere;
    NINF_ERROR_MAP(ELSEWHERE_OF_)
#undef ELSEWHERE_OF_
    case NINF_ERR_COUNT_:
      break;
  }
  return false;
}

Status MetaInterface(const ServerAddress &meta, const std::string &function, InterfacePtr *out) {
  if ((*out = CachedInterface(meta, function))) return Status::Ok();
  std::unique_ptr<Channel> ch = TakePooled(meta);
  if (!ch) NINF_RETURN_IF_ERROR(ConnectToMetaserver(meta, &ch));
  ch->set_timeout_ms(kMetaTimeoutMs);
  Status st = GetInterface(meta, function, *ch, out);
  if (st.ok() || !MetaserverUnreachable(st)) GiveBack(meta, std::move(ch));
  return st;
}

Status MetaPlace(const ServerAddress &meta, wire::PlaceRequest request, wire::Placement *out) {
  if (request.site().empty()) request.set_site(ClientSite());
  NINF_RETURN_IF_ERROR(Exchange(meta, request, out));
  if (out->probe_size() == 0) return Status::Ok();
  for (const wire::PlacementTarget &t : out->probe()) {
    ServerAddress server;
    wire::ProbeOutcome probe;
    // A link that cannot be probed is placed on the default figures; the
    // call itself will find out whether that server is there.
    if (!ParseServerAddress(t.address(), &server).ok() ||
        !ProbeLink(server, out->probe_small_bytes(), out->probe_large_bytes(), &probe).ok())
      continue;
    probe.set_site(out->site());
    probe.set_server_id(t.server_id());
    wire::MetaAck ack;
    (void)Exchange(meta, probe, &ack);
  }
  request.set_no_probe(true);
  out->Clear();
  return Exchange(meta, request, out);
}

void MetaReportOutcome(const ServerAddress &meta, const wire::CallOutcome &outcome) {
  wire::MetaAck ack;
  (void)Exchange(meta, outcome, &ack);
}

Status ProbeLink(const ServerAddress &server, uint64_t small, uint64_t large,
                 wire::ProbeOutcome *out) {
  if (small >= large) return Status(NINF_ERR_INVALID_ARGUMENT, "probe sizes must grow");
  // Over TCP, whatever the same-host path: the link is what is measured.
  std::unique_ptr<Channel> ch;
  NINF_RETURN_IF_ERROR(ConnectToServer(server, &ch, true));
  ch->set_timeout_ms(kMetaTimeoutMs);
  double t_small = 0, t_large = 0, ignored = 0;
  // A first small probe warms the connection (slow start, page faults).
  NINF_RETURN_IF_ERROR(ProbeOnce(*ch, small, &ignored));
  NINF_RETURN_IF_ERROR(ProbeOnce(*ch, small, &t_small));
  NINF_RETURN_IF_ERROR(ProbeOnce(*ch, large, &t_large));
  out->set_small_bytes(small);
  out->set_small_seconds(t_small);
  out->set_large_bytes(large);
  out->set_large_seconds(t_large);
  return Status::Ok();
}

}  // namespace ninf::client
