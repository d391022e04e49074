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
    "port listens on 127.0.0.1; beyond loopback it is HTTPS with tls_cert and tls_key, and "
    "plain HTTP there needs insecure or allow_plaintext; \"\": none";

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

// TLS (docs/security.md): PEM files. With tls_cert, every TCP connection of
// the listener speaks TLS 1.3 only (the same-host Unix socket stays
// plaintext). Live: SIGHUP reads the files again for new connections, and
// a reload that fails keeps the old ones.
template <class S>
SettingSpecOf<S> TlsCertRow() {
  return {
      "tls_cert",
      SettingKind::kString,
      "",
      0,
      0,
      "PEM certificate (chain) of this daemon: with it, TCP connections are TLS 1.3 only; \"\": "
      "plaintext",
      &S::tls_cert,
      Reload::kLive};
}

template <class S>
SettingSpecOf<S> TlsKeyRow() {
  return {"tls_key", SettingKind::kString,          "",          0,
          0,         "PEM private key of tls_cert", &S::tls_key, Reload::kLive};
}

template <class S>
SettingSpecOf<S> TlsClientCaRow() {
  return {"tls_client_ca",
          SettingKind::kString,
          "",
          0,
          0,
          "PEM CA certificates: TLS clients must show a certificate signed by one (mutual TLS); "
          "\"\": none asked",
          &S::tls_client_ca,
          Reload::kLive};
}

}  // namespace ninf::daemon
