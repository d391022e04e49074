// Server: what ninfd tells the metaserver (MetaReporter does the talking).
// Its registration: the address clients should call, site, slots, every
// served interface; its load: calls running and queued, their predicted
// work, and per function what the calls so far measured.
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

#include "daemon/exposure.h"
#include "daemon/log.h"
#include "protocol/default_ports.h"
#include "server/server.h"

namespace ninf::server {
namespace {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || !*name) return "localhost";
  return name;
}

// Unique per run of the daemon: a restarted ninfd is a new server to the
// metaserver (whose entry for the old one it replaces, same address).
std::string MakeServerId(int port) {
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", static_cast<unsigned>(rd()));
  return HostName() + ":" + std::to_string(port) + "-" + std::to_string(::getpid()) + "-" + suffix;
}

// The name this server registers with the relay: relay_name, else the
// host's name.
std::string RelayNameOf(const Settings &settings) {
  return settings.relay_name.empty() ? HostName() : settings.relay_name;
}

}  // namespace

Status Server::StartRelayLink() {
  RelayLink::Config config;
  if (settings_.relay.empty())
    return Status(NINF_ERR_CONFIG,
                  "reverse: set relay (host:port of the ninf-relay this server connects out to)");
  Status st = ParseHostPort(settings_.relay, HostPort{"", kRelayPort}, &config.relay);
  if (!st.ok() || !config.relay.unix_path.empty() || !config.relay.relay_name.empty())
    return Status(NINF_ERR_CONFIG, "relay: " + (st.ok() ? "give host:port" : st.message()));
  config.name = RelayNameOf(settings_);
  if (!IsRelayName(config.name))
    return Status(NINF_ERR_CONFIG, "relay_name: '" + config.name +
                                       "' is not 1 to 64 of A-Z a-z 0-9 . _ - (set relay_name)");
  // Anyone who reaches the relay reaches this server: as with listening
  // beyond loopback, that needs a key and TLS (end to end through the
  // relay) unless the operator says otherwise on purpose.
  daemon::Exposure exposure = Exposed();
  exposure.listen = config.relay.host;
  NINF_RETURN_IF_ERROR(daemon::CheckExposure(exposure));
  config.key_file =
      settings_.relay_key_file.empty() ? settings_.key_file : settings_.relay_key_file;
  // As with the metaserver: tls_ca makes the control connection TLS.
  config.tls = {.ca = settings_.tls_ca, .cert = settings_.tls_cert, .key = settings_.tls_key};
  relay_ = std::make_unique<RelayLink>(
      loop_, std::move(config),
      [this](daemon::UniqueFd fd, const std::string &peer) { Accept(std::move(fd), peer, true); });
  spdlog::info("event=reverse relay={} name={}", daemon::Quoted(settings_.relay),
               RelayNameOf(settings_));
  return relay_->Start();
}

std::string Server::AdvertisedAddress() const {
  // A reverse server is called through its relay: at `advertise` when the
  // clients reach the relay at another address than this server does.
  if (HostPort relay;
      settings_.reverse &&
      ParseHostPort(settings_.advertise.empty() ? settings_.relay : settings_.advertise,
                    HostPort{"", kRelayPort}, &relay)
          .ok())
    return RelayNameOf(settings_) + "@" + relay.Key();
  // "host" alone (or "host:0") takes the port ninfd listens on: with --port 0
  // only the daemon knows it.
  if (HostPort hp;
      !settings_.advertise.empty() && ParseHostPort(settings_.advertise, HostPort{"", 0}, &hp).ok())
    return hp.port ? settings_.advertise
                   : (hp.host.find(':') != std::string::npos ? "[" + hp.host + "]" : hp.host) +
                         ":" + std::to_string(listener_.port());
  std::string host = settings_.listen;
  if (host == "0.0.0.0" || host == "::" || host.empty()) host = HostName();
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + std::to_string(listener_.port());
}

wire::ServerRegistration Server::Registration() const {
  wire::ServerRegistration reg;
  reg.set_server_id(server_id_);
  reg.set_address(AdvertisedAddress());
  reg.set_site(settings_.site.empty() ? HostName() : settings_.site);
  reg.set_cores(static_cast<uint32_t>(cores_));
  reg.set_slots(static_cast<uint32_t>(scheduler_.desk().admission().slots()));
  for (const std::string &name : registry_.Names())
    if (const FunctionEntry *e = registry_.Find(name)) *reg.add_functions() = ServedInterface(*e);
  return reg;
}

Status Server::StartMetaReporter() {
  if (settings_.metaserver.empty()) return Status::Ok();
  MetaReporter::Config config;
  Status st = ParseHostPort(settings_.metaserver, HostPort{"", kMetaPort}, &config.metaserver);
  if (!st.ok()) return Status(NINF_ERR_CONFIG, "metaserver: " + st.message());
  HostPort self;
  if (!settings_.advertise.empty() &&
      !(st = ParseHostPort(settings_.advertise, HostPort{"", 0}, &self)).ok())
    return Status(NINF_ERR_CONFIG, "advertise: " + st.message());
  server_id_ = MakeServerId(listener_.port());
  config.key_file = settings_.key_file;
  config.registration = Registration();
  config.threads_per_job = LoneCallThreads(scheduler_.desk().admission().config());
  if (!settings_.tls_ca.empty())
    config.tls = {.ca = settings_.tls_ca, .cert = settings_.tls_cert, .key = settings_.tls_key};
  reporter_ = std::make_unique<MetaReporter>(std::move(config));
  reporter_->Start();
  spdlog::info("event=metaserver metaserver={} server={} advertise={}",
               daemon::Quoted(settings_.metaserver), server_id_,
               daemon::Quoted(AdvertisedAddress()));
  PublishLoad();
  return Status::Ok();
}

void Server::PublishLoad() {
  if (!reporter_) return;
  const Admission &admission = scheduler_.desk().admission();
  wire::LoadReport load;
  load.set_running(static_cast<uint32_t>(admission.running()));
  load.set_queued(static_cast<uint32_t>(admission.queued()));
  load.set_free_slots(static_cast<uint32_t>(std::max(0, admission.slots() - admission.running())));
  load.set_calls_admitted(counters_.calls_received);
  load.set_startup_seconds(counters_.startup_seconds);
  const ArrivalGate &arrivals = scheduler_.desk().arrivals();
  load.set_arriving(static_cast<uint32_t>(arrivals.held().calls));
  load.set_arriving_bytes(arrivals.held().bytes);
  load.set_arrival_waiting(static_cast<uint32_t>(arrivals.waiting().calls));
  double loads[1] = {0};
  if (::getloadavg(loads, 1) == 1) load.set_load_average(loads[0]);
  load.set_work_seconds(PredictedWorkSeconds(scheduler_.job_table(), counters_));
  for (const auto &[name, f] : counters_.functions) {
    if (f.completed == 0) continue;
    wire::FunctionLoad *fl = load.add_functions();
    fl->set_name(name);
    fl->set_calls(f.completed);
    fl->set_mean_seconds(f.busy_seconds / static_cast<double>(f.completed));
    fl->set_flops_per_second(f.flops_per_second);
    fl->set_warm(scheduler_.executables().pool().idle(name) > 0);
  }
  reporter_->Publish(load);
}

}  // namespace ninf::server
