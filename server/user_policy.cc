#include "server/user_policy.h"

#include "daemon/auth_handshake.h"

namespace ninf::server {

Status UserPolicy::Load(std::set<std::string> *gone) {
  Principals fresh;
  NINF_RETURN_IF_ERROR(LoadPrincipals(settings_.key_file, settings_.Users(), &fresh));
  gone->clear();
  for (const auto &[key, user] : principals_.user_of_key) gone->insert(user);
  for (const auto &[subject, user] : principals_.user_of_subject) gone->insert(user);
  for (const auto &[key, user] : fresh.user_of_key) gone->erase(user);
  for (const auto &[subject, user] : fresh.user_of_subject) gone->erase(user);
  principals_ = std::move(fresh);
  return Status::Ok();
}

Identity UserPolicy::Of(daemon::Connection &conn) const {
  return Identify(principals_, daemon::ProvedBy(conn));
}

Identity UserPolicy::OfCall(const std::string &owner, const std::string &key_id) const {
  Identity who{.user = owner};
  // The key it came with must still be its user's.
  if (!key_id.empty()) {
    auto it = principals_.user_of_key.find(key_id);
    who.revoked = it == principals_.user_of_key.end() || it->second != who.user;
  }
  // A user known by its certificate alone: still a user?
  if (!who.user.empty() && !Knows(principals_, who.user)) who.revoked = true;
  return who;
}

bool UserPolicy::NeedsKey(const std::string &peer_subject) const {
  return daemon::NeedsKey(principals_, peer_subject);
}

Status UserPolicy::MayRun(const Identity &who, const std::string &function) const {
  if (who.revoked)
    return Status(NINF_ERR_AUTH,
                  "ninfd: the user of this call was revoked: its key is no longer one of "
                  "ninfd's (its key_file or a [users.NAME] key_file)");
  if (!MayCall(principals_, who.user, settings_.LimitsOf(function).allow))
    return Status(NINF_ERR_DENIED, "ninfd: user '" + std::string(ShownUser(who.user)) +
                                       "' may not call '" + function +
                                       "' here (the allow list of [limits." + function +
                                       "] in ninfd's config names neither the user nor one of "
                                       "its groups)");
  return Status::Ok();
}

RunAs UserPolicy::RunAsOf(std::string_view user) const {
  auto it = principals_.run_as.find(user);
  return it == principals_.run_as.end() ? RunAs{} : it->second;
}

bool UserPolicy::SeesEveryUser(const Identity &who) const {
  // The roles were read with the principals (Load): a STATS request
  // resolves no table.
  return who.user.empty() || principals_.operators.count(who.user) > 0;
}

const auth::Key *UserPolicy::KeyOfCall(const std::string &owner, const std::string &key_id) const {
  // A revoked key proves nothing for the calls it started.
  auto holder = principals_.user_of_key.find(key_id);
  const bool still_users = holder != principals_.user_of_key.end() && holder->second == owner;
  return key_id.empty() || !still_users ? nullptr : principals_.ring.Find(key_id);
}

}  // namespace ninf::server
