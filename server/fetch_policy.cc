#include "server/fetch_policy.h"

#include <algorithm>

#include "protocol/address.h"

namespace ninf::server {
namespace {

// "host:port" with the host as ParseHostPort gives it (no brackets), or
// "unix:/path" as it is: the form the lists are compared in. "" when `text`
// is neither.
std::string Canonical(const std::string &text) {
  if (text.rfind("unix:/", 0) == 0) return text;
  HostPort hp;
  if (!ParseHostPort(text, HostPort{"", 0}, &hp).ok() || !hp.unix_path.empty() ||
      !hp.relay_name.empty() || hp.host.empty() || hp.port <= 0)
    return {};
  return hp.host + "|" + std::to_string(hp.port);
}

bool Listed(const std::set<std::string> &list, const std::string &canonical) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string &entry) { return Canonical(entry) == canonical; });
}

}  // namespace

Status ParseFetchFrom(const std::string &text, std::set<std::string> *out) {
  out->clear();
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(at, end - at);
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (!entry.empty()) {
      if (Canonical(entry).empty())
        return Status(NINF_ERR_CONFIG, "fetch_from: '" + entry +
                                           "' is neither ip:port nor unix:/path (the addresses "
                                           "of the ninfds whose kept data this server's calls "
                                           "may read)");
      out->insert(entry);
    }
    at = end + 1;
  }
  return Status::Ok();
}

Status MayFetchFrom(const std::string &address, const FetchPeers &peers) {
  const std::string canonical = Canonical(address);
  if (canonical.empty()) {  // not an address at all
  } else if (address.rfind("unix:", 0) == 0) {
    // A same-host client's references name the keeping ninfd's socket.
    if ((!peers.own_unix_path.empty() && address.substr(5) == peers.own_unix_path) ||
        Listed(peers.configured, canonical))
      return Status::Ok();
  } else {
    const std::string port = "|" + std::to_string(peers.own_port);
    for (const std::string &ip : peers.local_ips)
      if (canonical == ip + port) return Status::Ok();
    if (Listed(peers.listed, canonical) || Listed(peers.configured, canonical)) return Status::Ok();
  }
  if (peers.metaserver && !canonical.empty() && address.rfind("unix:", 0) != 0)
    return Status(NINF_ERR_TIMEOUT,
                  "kept data at " + address + ": not (yet) among the servers the metaserver lists");
  return Status(NINF_ERR_AUTH,
                "kept data at " + address +
                    ": not a server this ninfd's calls may read from (itself, a server its "
                    "metaserver lists, or one of its fetch_from setting): add it to fetch_from");
}

}  // namespace ninf::server
