#include "relay/registrations.h"

#include "protocol/hex.h"

namespace ninf::relay {

std::string KeyIdText(const std::string &identity) {
  return identity.empty() ? "none" : HexOf(identity);
}

Status Registrations::Conflict(const Registrant &who, const Server &held, uint64_t now_ms) const {
  const uint64_t quiet_ms = now_ms >= held.heard_ms ? now_ms - held.heard_ms : 0;
  const std::string heard = " (heard from " + std::to_string(quiet_ms / 1000) + " s ago)";
  if (held.identity != who.identity)
    return Status(NINF_ERR_CONFIG, "relay name '" + who.name + "' is registered by key " +
                                       KeyIdText(held.identity) + heard + ", not " +
                                       KeyIdText(who.identity) +
                                       ": a name belongs to the key that registered it");
  if (held.instance == who.instance || quiet_ms > limits_.live_ms) return Status::Ok();
  return Status(NINF_ERR_CONFIG, "relay name '" + who.name + "' is registered by another ninfd" +
                                     heard +
                                     ": give each ninfd its own relay_name (the default is the "
                                     "host name, which cloned hosts share)");
}

Status Registrations::Register(const Registrant &who, Peer control, uint64_t now_ms,
                               Registered *out) {
  *out = Registered{};
  const std::string &name = who.name;
  auto held = control_.find(control);
  if (held != control_.end() && held->second != name)
    return Status(NINF_ERR_PROTOCOL, "a control connection registers one name ('" + held->second +
                                         "'), not '" + name + "'");
  auto found = servers_.find(name);
  if (found != servers_.end() && found->second.control && found->second.control != control) {
    NINF_RETURN_IF_ERROR(Conflict(who, found->second, now_ms));
    // The same ninfd again, or the same key's holder gone quiet: the older
    // connection is a ninfd that died without the relay noticing yet.
    out->replaced = found->second.control;
    control_.erase(out->replaced);
  } else if (found == servers_.end() && servers_.size() >= limits_.max_servers) {
    return Status(NINF_ERR_SERVER, "the relay has max_servers (" +
                                       std::to_string(limits_.max_servers) +
                                       ") servers registered");
  }
  out->fresh = held == control_.end();
  Server &server = servers_[name];
  server.control = control;
  server.identity = who.identity;
  server.instance = who.instance;
  server.heard_ms = now_ms;
  control_[control] = name;
  return Status::Ok();
}

Status Registrations::Admit(const std::string &name) const {
  auto it = servers_.find(name);
  if (it == servers_.end() || !it->second.control)
    return Status(NINF_ERR_CONNECT, "no server named '" + name +
                                        "' is registered at this relay (is its ninfd running "
                                        "with --reverse --relay pointing here?)");
  const Server &server = it->second;
  if (server.pending >= limits_.max_pending_dials)
    return Status(NINF_ERR_SERVER, "server '" + name + "' has " + std::to_string(server.pending) +
                                       " clients waiting for it (max_pending_dials) at this "
                                       "relay: try again later");
  if (server.pending + server.bridges >= limits_.max_bridges_per_server)
    return Status(NINF_ERR_SERVER, "server '" + name + "' has " + std::to_string(server.bridges) +
                                       " relayed connections (max_bridges_per_server) at this "
                                       "relay: try again later");
  return Status::Ok();
}

Peer Registrations::Wait(const std::string &token, const std::string &name, Peer client,
                         uint64_t now_ms) {
  Server &server = servers_[name];
  pending_[token] = PendingDial{name, client, now_ms + limits_.dial_timeout_ms};
  waiting_[client] = token;
  ++server.pending;
  return server.control;
}

std::optional<PendingDial> Registrations::TakeDial(const std::string &token,
                                                   const std::string &identity) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return std::nullopt;
  auto server = servers_.find(it->second.server);
  if (server == servers_.end() || server->second.identity != identity) return std::nullopt;
  return Take(token);
}

std::optional<PendingDial> Registrations::Take(const std::string &token) {
  auto it = pending_.find(token);
  if (it == pending_.end()) return std::nullopt;
  PendingDial dial = std::move(it->second);
  pending_.erase(it);
  waiting_.erase(dial.client);
  if (auto s = servers_.find(dial.server); s != servers_.end()) --s->second.pending;
  return dial;
}

std::vector<PendingDial> Registrations::Expire(uint64_t now_ms) {
  std::vector<std::string> late;
  for (const auto &[token, p] : pending_)
    if (now_ms >= p.deadline_ms) late.push_back(token);
  std::vector<PendingDial> out;
  for (const std::string &token : late) out.push_back(*Take(token));
  return out;
}

void Registrations::BridgeOpened(const std::string &server) {
  if (auto s = servers_.find(server); s != servers_.end()) ++s->second.bridges;
}

void Registrations::BridgeClosed(const std::string &server) {
  if (auto s = servers_.find(server); s != servers_.end() && s->second.bridges > 0) {
    --s->second.bridges;
    DropIfIdle(server);
  }
}

Departure Registrations::Closed(Peer conn) {
  Departure out;
  if (auto c = control_.find(conn); c != control_.end()) {
    out.name = c->second;
    control_.erase(c);
    out.orphans = Unregister(out.name);
  }
  if (auto w = waiting_.find(conn); w != waiting_.end()) (void)Take(w->second);
  return out;
}

std::vector<Peer> Registrations::Unregister(const std::string &name) {
  std::vector<Peer> orphans;
  auto it = servers_.find(name);
  if (it == servers_.end()) return orphans;
  it->second.control = nullptr;
  // Clients waiting for this server would wait in vain.
  std::vector<std::string> tokens;
  for (const auto &[token, p] : pending_)
    if (p.server == name) tokens.push_back(token);
  for (const std::string &token : tokens) orphans.push_back(Take(token)->client);
  DropIfIdle(name);
  return orphans;
}

void Registrations::DropIfIdle(const std::string &name) {
  auto it = servers_.find(name);
  if (it != servers_.end() && !it->second.control && it->second.pending == 0 &&
      it->second.bridges == 0)
    servers_.erase(it);
}

std::size_t Registrations::pending(const std::string &name) const {
  auto it = servers_.find(name);
  return it == servers_.end() ? 0 : it->second.pending;
}

std::size_t Registrations::bridges(const std::string &name) const {
  auto it = servers_.find(name);
  return it == servers_.end() ? 0 : it->second.bridges;
}

Peer Registrations::control(const std::string &name) const {
  auto it = servers_.find(name);
  return it == servers_.end() ? nullptr : it->second.control;
}

}  // namespace ninf::relay
