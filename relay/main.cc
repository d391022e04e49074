// ninf-relay: parse the settings, then run the RelayServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals).
// relay_server.h has the map; docs/relay.md the picture.
#include "daemon/daemon_main.h"
#include "relay/relay_server.h"
#include "relay/relay_settings.h"

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
  // the rows marked live (the log level) and reads the key file again (a key
  // is rotated without dropping the bridges); other changed settings need a
  // restart.
  const ninf::daemon::TableProgram<RelayServer, ninf::relay::RelayInvocation> program{
      .name = "ninf-relay",
      .parse = ninf::relay::ParseRelayInvocation,
      .table = ninf::relay::RelaySettingsTable(),
      .fds_per_connection = 4,
      .hooks = {.apply = nullptr, .after = [](RelayServer &server) { server.ReloadKeys(); }}};
  return ninf::daemon::RunTableDaemon(program, argc, argv, inv);
}
