// The client configuration file of grpc_initialize() (TOML; the shipped
// example config/client.toml explains every key).
#pragma once

#include <map>
#include <string>

#include "client/options.h"
#include "client/server_address.h"
#include "protocol/status.h"

namespace ninf::client {

struct ClientConfig {
  bool has_default_server = false;
  ServerAddress default_server;
  std::map<std::string, ServerAddress> servers;  // alias -> address
  bool has_metaserver = false;                   // bare names are placed by it
  ServerAddress metaserver;
  ClientOptions options;
};

// Reads `path`. Errors: NINF_ERR_INVALID_ARGUMENT for a missing file,
// NINF_ERR_PROTOCOL for a malformed one (with file:line and the reason).
Status LoadClientConfig(const std::string &path, ClientConfig *out);

}  // namespace ninf::client
