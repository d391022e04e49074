#include "daemon/status_tool.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include "ninf.pb.h"
#include "protocol/address.h"
#include "protocol/ask.h"
#include "protocol/auth.h"
#include "protocol/layout.h"
#include "protocol/wire.h"

namespace ninf::daemon {

namespace {

constexpr int kTimeoutMs = 5000;

// The TLS handshake on `channel`'s socket, verified for the daemon's name
// (through a relay: the server's name, as the client verifies it).
Status StartTls(const HostPort &target, int timeout_ms, const tls::ClientFiles &files,
                Channel &channel) {
  tls::Context ctx;
  NINF_RETURN_IF_ERROR(tls::MakeClientContext(files, &ctx));
  const std::string &name = target.relay_name.empty() ? target.host : target.relay_name;
  tls::SslPtr ssl;
  bool plaintext = false;
  Status st = tls::Connect(ctx, channel.fd(), name, target.port, timeout_ms, &ssl, &plaintext,
                           /*resume=*/false);
  if (plaintext)
    return Status(st.code(), "the daemon does not speak TLS: unset tls_ca (NINF_TLS_CA) for it");
  NINF_RETURN_IF_ERROR(st);
  channel.UseTls(std::move(ssl));
  return Status::Ok();
}

// Connects to `target` (host:port, or a reverse server's name@relay:port:
// first the relay is asked for it, docs/relay.md), runs TLS with it when
// access.tls.ca is set, authenticates with the first key of
// access.key_file (if any) and runs `body` on the channel.
Status WithDaemon(const HostPort &target, int timeout_ms, const ToolAccess &access,
                  const std::function<Status(Channel &)> &body) {
  auth::KeyRing keys;
  if (!access.key_file.empty()) NINF_RETURN_IF_ERROR(auth::LoadKeyFile(access.key_file, &keys));
  int fd = -1;
  NINF_RETURN_IF_ERROR(ConnectTcp(target.host, target.port, timeout_ms, &fd));
  Channel channel(fd, timeout_ms);
  if (!target.relay_name.empty()) {
    wire::RelayOpen open;
    open.set_name(target.relay_name);
    NINF_RETURN_IF_ERROR(channel.SendFrame(FRAME_RELAY_OPEN, &open));
  }
  if (!access.tls.ca.empty())
    NINF_RETURN_IF_ERROR(StartTls(target, timeout_ms, access.tls, channel));
  if (!keys.keys.empty()) NINF_RETURN_IF_ERROR(auth::AuthenticateToServer(channel, keys.keys[0]));
  return body(channel);
}

Status StatsAt(const HostPort &target, int timeout_ms, const ToolAccess &access, std::string *text,
               const std::string &view) {
  return WithDaemon(target, timeout_ms, access, [&](Channel &channel) {
    wire::StatsRequest request;
    request.set_view(view);
    wire::StatsReply reply;
    NINF_RETURN_IF_ERROR(Ask(channel, request, &reply));
    *text = reply.text();
    return Status::Ok();
  });
}

// The daemon to ask: `server` (host:port) if given, else the daemon's own
// listen address and port. False (with a message naming `program`) when
// `server` does not parse.
bool Target(const char *program, const std::string &listen, int port, const std::string &server,
            HostPort *out) {
  out->host = listen;
  if (out->host == "0.0.0.0" || out->host.empty()) out->host = "127.0.0.1";
  if (out->host == "::") out->host = "::1";
  out->port = port;
  if (server.empty()) return true;
  if (Status st = ParseHostPort(server, HostPort{"127.0.0.1", 0}, out); !st.ok()) {
    std::fprintf(stderr, "%s: %s\n", program, st.message().c_str());
    return false;
  }
  return true;
}

// "dgesv(IN int n, ...)  [MPI]  Solves A X = B ..."
std::string FunctionLine(const wire::FunctionInterface &iface) {
  std::string line = Signature(iface);
  if (!iface.backend().empty()) line += "  [" + iface.backend() + "]";
  if (!iface.description().empty()) line += "  " + iface.description();
  return line;
}

}  // namespace

Status QueryStats(const HostPort &target, int timeout_ms, const ToolAccess &access,
                  std::string *text, const std::string &view) {
  return StatsAt(target, timeout_ms, access, text, view);
}

int PrintStats(const char *program, const std::string &listen, int port, const std::string &server,
               const ToolAccess &access, const std::string &view) {
  HostPort target;
  if (!Target(program, listen, port, server, &target)) return 1;
  std::string text;
  if (Status st = StatsAt(target, kTimeoutMs, access, &text, view); !st.ok()) {
    std::fprintf(stderr, "%s: cannot get statistics from %s: %s\n", program, target.Key().c_str(),
                 st.ToString().c_str());
    return 1;
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}

int PrintFunctions(const char *program, const std::string &listen, int port,
                   const std::string &server, const ToolAccess &access) {
  HostPort target;
  if (!Target(program, listen, port, server, &target)) return 1;
  std::vector<std::string> lines;
  Status st = WithDaemon(target, kTimeoutMs, access, [&](Channel &channel) {
    wire::ListReply names;
    NINF_RETURN_IF_ERROR(Ask(channel, wire::ListRequest(), &names));
    for (const std::string &name : names.names()) {
      wire::QueryInterface query;
      query.set_name(name);
      wire::InterfaceReply reply;
      NINF_RETURN_IF_ERROR(Ask(channel, query, &reply));
      NINF_RETURN_IF_ERROR(ValidateInterface(reply.iface()));
      lines.push_back(FunctionLine(reply.iface()));
    }
    return Status::Ok();
  });
  if (!st.ok()) {
    std::fprintf(stderr, "%s: cannot list the functions of %s: %s\n", program, target.Key().c_str(),
                 st.ToString().c_str());
    return 1;
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string &line : lines) std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace ninf::daemon
