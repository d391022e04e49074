// ninf-relay: parse the settings, then run the RelayServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals).
// relay_server.h has the map; docs/relay.md the picture.
#include "daemon/daemon_main.h"
#include "daemon/log.h"
#include "relay/relay_server.h"
#include "relay/relay_settings.h"

namespace {

// SIGHUP reads the TLS files again (a renewed certificate keeps its path);
// a failure keeps the ones in use, and the running settings say so.
void ReloadTls(ninf::relay::RelayServer &server, ninf::relay::RelaySettings *running,
               const ninf::relay::RelaySettings &previous) {
  if (ninf::Status st = server.LoadTls(*running); !st.ok()) {
    spdlog::error("event=reload_failed settings=tls error={}", ninf::daemon::Quoted(st.message()));
    running->tls_cert = previous.tls_cert;
    running->tls_key = previous.tls_key;
  }
}

}  // namespace

int main(int argc, char **argv) {
  using ninf::relay::RelayServer;
  ninf::relay::RelayInvocation inv;
  if (auto exit_status = ninf::daemon::ReadCommandLine("ninf-relay", argc, argv,
                                                       ninf::relay::ParseRelayInvocation, &inv))
    return *exit_status;
  // ninf-relay runs as a daemon::TableDaemon. ninfd's or the client's
  // variable where ninf-relay's own is not set is not read, and said once,
  // so that a key file meant for the relay is not dropped without a word. A
  // connection holds its socket; a bridge two sockets and two pipes (four
  // descriptors), counted against max_connections twice over. SIGHUP applies
  // the rows marked live (the log level, the TLS files) and reads the key
  // file again (a key is rotated without dropping the bridges); other
  // changed settings need a restart.
  const ninf::daemon::TableProgram<RelayServer, ninf::relay::RelayInvocation> program{
      .name = "ninf-relay",
      .parse = ninf::relay::ParseRelayInvocation,
      .table = ninf::relay::RelaySettingsTable(),
      .fds_per_connection = 4,
      .hooks = {.apply = ReloadTls, .after = [](RelayServer &server) { server.ReloadKeys(); }}};
  return ninf::daemon::RunTableDaemon(program, argc, argv, inv);
}
