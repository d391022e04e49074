#include "client/two_phase.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "client/c_boundary.h"
#include "client/connect.h"
#include "client/exchange.h"
#include "client/interfaces.h"
#include "client/last_error.h"
#include "client/ninf.h"
#include "client/remote_call.h"
#include "client/transaction.h"
#include "protocol/hex.h"
#include "protocol/interrupt.h"

namespace ninf::client {
namespace {

constexpr char kTicketPrefix[] = "ninf1:";

bool Unhex(const std::string &text, std::string *out) {
  if (text.size() % 2 != 0) return false;
  out->clear();
  for (std::size_t i = 0; i < text.size(); i += 2) {
    int v = 0;
    for (int k = 0; k < 2; ++k) {
      const char c = text[i + k];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    out->push_back(static_cast<char>(v));
  }
  return true;
}

Status BadTicket(const std::string &why) {
  return Status(NINF_ERR_INVALID_ARGUMENT, "not a Ninf ticket: " + why);
}

// COLLECT until the result is there, then RELEASE. `list` is the caller's
// argument list, built from the function's interface on that server.
Status CollectInto(const Ticket &ticket, Channel &ch, const ArgumentList &list) {
  wire::StoreKey key;
  key.set_id(ticket.id);
  key.set_token(ticket.token);
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_COLLECT, &key));
    ExchangeTimes times;
    Status st = ReceiveResult(ch, list, &times);
    if (st.code() != NINF_ERR_NOT_READY || times.result_started) {
      if (!times.result_started) return st;  // the call's error, or the ticket's
      NINF_RETURN_IF_ERROR(st);
      break;
    }
    std::this_thread::sleep_for(pause);  // the call still runs
    // Stopping the wait leaves the call and its result on the server, for
    // a later collect: the connection is closed, not reset.
    if (InterruptRequested()) return InterruptedStatus();
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_RELEASE, &key));
  wire::Released released;
  FrameHeader h;
  return ch.RecvReply(FRAME_RELEASED, 0, &released, &h);
}

// Resolves the ticket and opens its server, with the interface of the
// function the ticket is for (which must be `name`).
Status OpenTicket(const char *text, const char *name, Ticket *ticket, std::unique_ptr<Channel> *ch,
                  InterfacePtr *iface) {
  if (!text || !name) return Status(NINF_ERR_INVALID_ARGUMENT, "NULL ticket or function name");
  NINF_RETURN_IF_ERROR(ParseTicket(text, ticket));
  ServerAddress ignored;
  std::string function;
  NINF_RETURN_IF_ERROR(ResolveName(name, &ignored, &function));
  if (function != ticket->function)
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "the ticket is for '" + ticket->function + "', not for '" + function + "'");
  NINF_RETURN_IF_ERROR(ConnectToServer(ticket->server, ch));
  return GetInterface(ticket->server, ticket->function, **ch, iface);
}

}  // namespace

std::string FormatTicket(const ServerAddress &server, const std::string &function,
                         const wire::Submitted &submitted) {
  return kTicketPrefix + std::to_string(submitted.id()) + ":" + HexOf(submitted.token()) + ":" +
         function + "@" + server.Key();
}

Status ParseTicket(const std::string &text, Ticket *out) {
  if (text.rfind(kTicketPrefix, 0) != 0) return BadTicket("it does not start with ninf1:");
  std::string rest = text.substr(sizeof kTicketPrefix - 1);
  const std::size_t c1 = rest.find(':');
  const std::size_t c2 = c1 == std::string::npos ? c1 : rest.find(':', c1 + 1);
  const std::size_t at = c2 == std::string::npos ? c2 : rest.find('@', c2 + 1);
  if (at == std::string::npos) return BadTicket("expected ninf1:ID:TOKEN:FUNCTION@SERVER");
  const std::string id = rest.substr(0, c1);
  if (id.empty() || id.size() > 19 || id.find_first_not_of("0123456789") != std::string::npos)
    return BadTicket("bad id '" + id + "'");
  out->id = std::stoull(id);
  if (!Unhex(rest.substr(c1 + 1, c2 - c1 - 1), &out->token) || out->token.empty())
    return BadTicket("bad token");
  out->function = rest.substr(c2 + 1, at - c2 - 1);
  if (out->function.empty()) return BadTicket("no function");
  Status st = ParseServerAddress(rest.substr(at + 1), &out->server);
  if (!st.ok()) return BadTicket(st.message());
  return Status::Ok();
}

std::string NumericAddress(const ServerAddress &server, int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  char host[INET6_ADDRSTRLEN] = {};
  if (::getpeername(fd, reinterpret_cast<sockaddr *>(&ss), &len) == 0) {
    if (ss.ss_family == AF_INET) {
      const auto *a = reinterpret_cast<const sockaddr_in *>(&ss);
      if (::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host))
        return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
    } else if (ss.ss_family == AF_INET6) {
      const auto *a = reinterpret_cast<const sockaddr_in6 *>(&ss);
      if (::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host))
        return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
    } else if (ss.ss_family == AF_UNIX) {
      const auto *a = reinterpret_cast<const sockaddr_un *>(&ss);
      if (a->sun_path[0] == '/') return std::string("unix:") + a->sun_path;
    }
  }
  return server.Key();
}

Status CollectCall(const char *text, const char *name, va_list *ap) {
  Ticket ticket;
  std::unique_ptr<Channel> ch;
  InterfacePtr iface;
  NINF_RETURN_IF_ERROR(OpenTicket(text, name, &ticket, &ch, &iface));
  ArgumentList list;
  NINF_RETURN_IF_ERROR(list.Build(iface, CollectVarargs(*iface, ap)));
  return CollectInto(ticket, *ch, list);
}

Status CollectCallBinding(const char *text, const char *name, const ninf_binding_args *binding) {
  Ticket ticket;
  std::unique_ptr<Channel> ch;
  InterfacePtr iface;
  NINF_RETURN_IF_ERROR(OpenTicket(text, name, &ticket, &ch, &iface));
  ArgumentList list;
  NINF_RETURN_IF_ERROR(BuildFromBinding(iface, binding, &list));
  return CollectInto(ticket, *ch, list);
}

}  // namespace ninf::client

using ninf::Status;
using ninf::client::RemoteCall;

namespace {

int RecordTicket(const Status &st, const std::string &text, Ninf_ticket *ticket) {
  if (st.ok()) {
    if (text.size() >= sizeof ticket->text)
      return ninf::client::RecordStatus(
          Status(NINF_ERR_INTERNAL, "the ticket is longer than Ninf_ticket holds"));
    std::memcpy(ticket->text, text.c_str(), text.size() + 1);
  }
  return ninf::client::RecordStatus(st);
}

Status NotInBlock() {
  return Status(NINF_ERR_NOT_SUPPORTED,
                "two-phase calls are not recorded in a transaction block: submit outside it");
}

}  // namespace

extern "C" {

int Ninf_call_submit_v(Ninf_ticket *ticket, const char *name, va_list args) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!ticket)
      return ninf::client::RecordStatus(Status(NINF_ERR_INVALID_ARGUMENT, "NULL ticket"));
    ticket->text[0] = '\0';
    if (ninf::client::InTransaction()) return ninf::client::RecordStatus(NotInBlock());
    RemoteCall call;
    va_list ap;
    va_copy(ap, args);
    Status st = call.Prepare(name, &ap);
    va_end(ap);
    std::string text;
    if (st.ok()) st = call.Submit(&text);
    return RecordTicket(st, text, ticket);
  });
}

int Ninf_call_submit(Ninf_ticket *ticket, const char *name, ...) {
  va_list ap;
  va_start(ap, name);
  int r = Ninf_call_submit_v(ticket, name, ap);
  va_end(ap);
  return r;
}

int Ninf_call_collect_v(const Ninf_ticket *ticket, const char *name, va_list args) {
  return ninf::client::GuardNinf([&]() -> int {
    va_list ap;
    va_copy(ap, args);
    Status st = ninf::client::CollectCall(ticket ? ticket->text : nullptr, name, &ap);
    va_end(ap);
    return ninf::client::RecordStatus(st);
  });
}

int Ninf_call_collect(const Ninf_ticket *ticket, const char *name, ...) {
  va_list ap;
  va_start(ap, name);
  int r = Ninf_call_collect_v(ticket, name, ap);
  va_end(ap);
  return r;
}

int Ninf_call_submit_binding(char *ticket, size_t ticket_size, const char *name,
                             const ninf_binding_args *args) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!ticket || ticket_size == 0)
      return ninf::client::RecordStatus(
          Status(NINF_ERR_INVALID_ARGUMENT, "no room for the ticket"));
    ticket[0] = '\0';
    if (ninf::client::InTransaction()) return ninf::client::RecordStatus(NotInBlock());
    RemoteCall call;
    Status st = call.PrepareBinding(name, args);
    std::string text;
    if (st.ok()) st = call.Submit(&text);
    if (st.ok() && text.size() >= ticket_size)
      st = Status(NINF_ERR_INVALID_ARGUMENT, "the ticket needs " + std::to_string(text.size()) +
                                                 " characters, the buffer holds " +
                                                 std::to_string(ticket_size - 1));
    if (st.ok()) std::memcpy(ticket, text.c_str(), text.size() + 1);
    return ninf::client::RecordStatus(st);
  });
}

int Ninf_call_collect_binding(const char *ticket, const char *name, const ninf_binding_args *args) {
  return ninf::client::GuardNinf([&]() -> int {
    return ninf::client::RecordStatus(ninf::client::CollectCallBinding(ticket, name, args));
  });
}

}  // extern "C"
