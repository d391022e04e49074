// The settings rows both daemons have, with one meaning and one help text:
// written once here, placed in each daemon's own table (server/settings.cc,
// metaserver/meta_settings.cc) by the function of its name. S is the
// daemon's settings struct, which has the field. Builds on
// daemon/settings_table.h.
#pragma once

#include "daemon/settings_table.h"

namespace ninf::daemon {

// The `metrics` setting's help, the same in ninfd's and ninf-meta's tables.
inline constexpr const char *kMetricsSettingHelp =
    "PORT or HOST:PORT of a Prometheus endpoint, GET /metrics (docs/monitoring.md); a bare "
    "port listens on 127.0.0.1; \"\": none";

// `default_port`: the daemon's own (protocol/default_ports.h).
template <class S>
SettingSpecOf<S> PortRow(const char *default_port) {
  constexpr const char *kHelp = "TCP port to listen on (0 picks any free port; see ready_file)";
  return {"port", SettingKind::kInteger, default_port, 0, 65535, kHelp, &S::port};
}

template <class S>
SettingSpecOf<S> ListenRow() {
  return {"listen",    SettingKind::kString,
          "127.0.0.1", 0,
          0,           "address to listen on (\"0.0.0.0\" or \"::\" for every interface)",
          &S::listen};
}

// 256: a 64-thread client holding a handle and making one-shot calls has
// up to 2 connections per thread, plus ones closing; max_connections (1024)
// sets the descriptor budget, so this only says how much of it one address
// may take (a quarter).
template <class S>
SettingSpecOf<S> MaxConnectionsPerClientRow() {
  return {"max_connections_per_client",
          SettingKind::kInteger,
          "256",
          1,
          1 << 20,
          "open connections from one client address; a new one over the limit replaces that "
          "address's oldest connection that sent nothing or stalled in its request, else is "
          "refused naming this setting",
          &S::max_connections_per_client};
}

template <class S>
SettingSpecOf<S> RequestTimeoutRow() {
  return {"request_timeout_seconds",
          SettingKind::kInteger,
          "10",
          1,
          3600,
          "a request must arrive whole within this long of its first byte (slow senders are cut "
          "off)",
          &S::request_timeout_seconds};
}

// Read at every log line: applies on SIGHUP.
template <class S>
SettingSpecOf<S> LogLevelRow() {
  constexpr const char *kHelp = "trace, debug, info, warn, error, critical or off";
  return {"log_level", SettingKind::kLogLevel, "info", 0, 0, kHelp, &S::log_level, Reload::kLive};
}

template <class S>
SettingSpecOf<S> ReadyFileRow() {
  return {"ready_file",
          SettingKind::kString,
          "",
          0,
          0,
          "once listening, write the port number and a newline into this file",
          &S::ready_file};
}

template <class S>
SettingSpecOf<S> MetricsRow() {
  return {"metrics", SettingKind::kString, "", 0, 0, kMetricsSettingHelp, &S::metrics};
}

}  // namespace ninf::daemon
