#include "daemon/exposure.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <string>

namespace ninf::daemon {

bool IsLoopbackAddress(std::string_view listen) {
  if (listen == "localhost") return true;
  std::string text(listen);
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Status CheckExposure(const Exposure &e) {
  if (e.insecure || IsLoopbackAddress(e.listen)) return Status::Ok();
  const std::string where(e.listen);
  if (!e.key)
    return Status(
        NINF_ERR_CONFIG,
        "refusing to listen on " + where +
            " without authentication: anyone who reaches it could run the registry's "
            "functions. Give the daemon a key_file (docs/security.md), or say --insecure to "
            "run without one on purpose");
  if (e.tls || e.plaintext) return Status::Ok();
  return Status(NINF_ERR_CONFIG,
                "refusing to serve " + where +
                    " without TLS: the calls' arrays, results and file names would cross the "
                    "network in clear. Give the daemon tls_cert and tls_key (a site CA and its "
                    "certificates in one command: scripts/site_ca.sh; docs/security.md#tls), "
                    "or say --allow-plaintext to serve in clear on purpose");
}

}  // namespace ninf::daemon
