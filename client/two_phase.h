// Two-phase calls and kept data on the client side (docs/transactions.md):
// the ticket's text form, and the numeric address under which a server's
// kept arrays are read by other servers' executables.
#pragma once

#include <cstdint>
#include <string>

#include "client/server_address.h"
#include "ninf.pb.h"
#include "protocol/status.h"

namespace ninf::client {

// Room beyond the arrays that a kept RESULT (or ERROR) frame may need: the
// frame header and its protobuf message.
inline constexpr uint64_t kResultFrameRoom = 64 * 1024;

struct Ticket {
  ServerAddress server;
  std::string function;
  uint64_t id = 0;
  std::string token;  // raw bytes
};

// "ninf1:ID:TOKENHEX:FUNCTION@SERVER": printable, to pass to another process.
std::string FormatTicket(const ServerAddress &server, const std::string &function,
                         const wire::Submitted &submitted);
// Errors: NINF_ERR_INVALID_ARGUMENT naming what is wrong with the text.
Status ParseTicket(const std::string &text, Ticket *out);

// The peer of the connected socket `fd` as a kept array's readers reach
// it: "ip:port", "[v6]:port" or "unix:/path"; `server`'s key if the socket
// says nothing.
std::string NumericAddress(const ServerAddress &server, int fd);

}  // namespace ninf::client
