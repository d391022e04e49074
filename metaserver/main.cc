// ninf-meta: parse the settings, then run the MetaServer on the daemon
// layer's loop (daemon/daemon_main.h: descriptors, limits, signals; SIGHUP
// rereads the settings). Everything else lives in its own file
// (meta_server.h has the map).
#include <uv.h>

#include <cstdio>

#include "daemon/daemon_main.h"
#include "daemon/log.h"
#include "daemon/status_tool.h"
#include "metaserver/meta_server.h"
#include "metaserver/meta_settings.h"

namespace {

using ninf::Status;
using ninf::daemon::Quoted;
using ninf::meta::MetaServer;
using ninf::meta::MetaSettings;

// ninf-meta runs as a daemon::TableDaemon. SIGHUP: the rows marked live in
// the table (the log level) change at once; any other changed key is
// reported and keeps its running value (the server, its sockets and its
// forecasts were built from them). A broken file changes nothing.
//
// SIGHUP also reads the TLS files again (a renewed certificate keeps its path)
// and the key files (a rotated key; the [users.NAME] and [limits.NAME]
// tables as the file now says); a failure keeps the ones in use.
void ReloadTls(MetaServer &server, MetaSettings *running, const MetaSettings &previous) {
  server.TakeUserTables(*running);
  if (Status st = server.LoadTls(*running); !st.ok()) {
    spdlog::error("event=reload_failed settings=tls error={}", Quoted(st.message()));
    running->tls_cert = previous.tls_cert;
    running->tls_key = previous.tls_key;
    running->tls_client_ca = previous.tls_client_ca;
  }
}

}  // namespace

int main(int argc, char **argv) {
  ninf::meta::MetaInvocation inv;
  if (auto exit_status = ninf::daemon::ReadCommandLine("ninf-meta", argc, argv,
                                                       ninf::meta::ParseMetaInvocation, &inv))
    return *exit_status;
  // ninfd's or the client's variable where ninf-meta's own is not set: not
  // read, and said once (a tool command on stderr, the daemon in its log),
  // so that a key file meant for ninf-meta is not dropped without a word.
  const bool tool = !inv.view.empty();
  if (tool)
    for (const ninf::daemon::ForeignVariable &v : inv.ignored_variables)
      std::fprintf(stderr, "ninf-meta: warning: %s\n",
                   ninf::daemon::ForeignVariableWarning(v, "ninf-meta").c_str());
  // Its tools reach it with its key and, with tls_ca, over TLS (showing
  // tls_cert where it asks for a client certificate).
  const ninf::daemon::ToolAccess access{
      .key_file = inv.settings.key_file,
      .tls = {
          .ca = inv.settings.tls_ca, .cert = inv.settings.tls_cert, .key = inv.settings.tls_key}};
  if (inv.view == "functions")
    return ninf::daemon::PrintFunctions("ninf-meta --list", inv.settings.listen,
                                        static_cast<int>(inv.settings.port), inv.status_server,
                                        access);
  if (tool)
    return ninf::daemon::PrintStats("ninf-meta", inv.settings.listen,
                                    static_cast<int>(inv.settings.port), inv.status_server, access,
                                    inv.view == "stats" ? "" : inv.view);
  // A connection holds its socket alone.
  const ninf::daemon::TableProgram<MetaServer, ninf::meta::MetaInvocation> program{
      .name = "ninf-meta",
      .parse = ninf::meta::ParseMetaInvocation,
      .table = ninf::meta::MetaSettingsTable(),
      .fds_per_connection = 1,
      .hooks = {.apply = ReloadTls, .after = [](MetaServer &server) { server.ReloadKeys(); }}};
  return ninf::daemon::RunTableDaemon(program, argc, argv, inv);
}
