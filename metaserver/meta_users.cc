#include "metaserver/meta_users.h"

#include "daemon/auth_handshake.h"

namespace ninf::meta {
namespace {

Status Revoked() {
  return Status(NINF_ERR_AUTH,
                "ninf-meta: the key of this connection is no longer one of ninf-meta's (its "
                "key_file or a [users.NAME] key_file): get the current key");
}

}  // namespace

Status MetaUsers::Load(const std::string &key_file, const daemon::UserSpecs &users) {
  daemon::Principals fresh;
  NINF_RETURN_IF_ERROR(daemon::LoadPrincipals(key_file, users, &fresh));
  principals_ = std::move(fresh);
  return Status::Ok();
}

bool MetaUsers::NeedsKey(const std::string &peer_subject) const {
  return daemon::NeedsKey(principals_, peer_subject);
}

daemon::Identity MetaUsers::Of(const daemon::Connection &conn) const {
  return daemon::Identify(principals_, daemon::ProvedBy(conn));
}

Status MayAsk(const daemon::Identity &who) { return who.revoked ? Revoked() : Status::Ok(); }

Status MayServe(const daemon::Identity &who) {
  if (who.revoked) return Revoked();
  if (who.user.empty() || who.user == daemon::kDefaultUser) return Status::Ok();
  return Status(NINF_ERR_DENIED,
                "ninf-meta: user '" + who.user +
                    "' is a client here and may not register a server: a ninfd proves the first "
                    "key of its key_file, which must be one of ninf-meta's own key_file (not a "
                    "[users.NAME] key)");
}

Status MayPlace(const daemon::Principals &p, const daemon::Identity &who,
                const std::string &function, const std::vector<std::string> &allow) {
  if (who.revoked) return Revoked();
  if (daemon::MayCall(p, who.user, allow)) return Status::Ok();
  return Status(NINF_ERR_DENIED, "ninf-meta: user '" + std::string(daemon::ShownUser(who.user)) +
                                     "' may not call '" + function +
                                     "' (the allow list of [limits." + function +
                                     "] in ninf-meta's config names neither the user nor one of "
                                     "its groups)");
}

}  // namespace ninf::meta
