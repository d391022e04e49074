// Per-user policy's one home: who a connection or a call is, whether they
// may call a function now, what they may keep, the account their
// executables run as. The decisions are the pure functions of users.h and
// the settings' [users.NAME] / [limits.NAME] tables (named_tables.cc); this
// holds what they decide over (the principals read from the key files) and
// is what the rest of ninfd asks: the request path, the scheduler's
// next-call check, kept data and the executables' proofs.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "daemon/connection.h"
#include "daemon/users.h"
#include "protocol/auth.h"
#include "protocol/status.h"
#include "server/settings.h"

namespace ninf::server {

class UserPolicy {
 public:
  // `settings` is the server's and outlives the policy (reloads change it
  // in place): the tables are read from it at the time of asking.
  explicit UserPolicy(const Settings &settings) : settings_(settings) {}
  UserPolicy(const UserPolicy &) = delete;
  UserPolicy &operator=(const UserPolicy &) = delete;

  // Reads the server's key_file and every user's (LoadPrincipals). On an
  // error nothing changes. *gone gets the users known before and not now
  // (revoked: their kept data is to be released).
  Status Load(std::set<std::string> *gone);

  bool keyed() const { return principals_.keyed(); }
  const auth::KeyRing &ring() const { return principals_.ring; }

  // The user of a connection now ("": anonymous). Two keys of one user (a
  // key being rotated) are the same user.
  Identity Of(daemon::Connection &conn) const;
  // The user of a call that came with `owner` and the key `key_id` ("":
  // none), now: revoked once a reload took the key from the user, or the
  // user away.
  Identity OfCall(const std::string &owner, const std::string &key_id) const;
  // A connection with this verified certificate subject ("": none) must
  // still prove a key: keys are required and the subject is nobody's.
  bool NeedsKey(const std::string &peer_subject) const;
  // May `who` call `function`, now? NINF_ERR_DENIED naming both if its
  // allow list leaves the user out; NINF_ERR_AUTH for a revoked user.
  Status MayRun(const Identity &who, const std::string &function) const;
  // The quotas in force for `user`.
  UserQuota QuotaOf(std::string_view user) const { return settings_.QuotaOf(user); }
  // The local account `user`'s executables run as (unset: as ninfd).
  RunAs RunAsOf(std::string_view user) const;
  // Whether `who` sees every user's STATS lines: a connection that is no
  // user (the daemon's own key, which --status shows) or a user whose role
  // is "operator".
  bool SeesEveryUser(const Identity &who) const;
  // The key a call of `owner` proved with `key_id`, while it is still the
  // user's; null otherwise.
  const auth::Key *KeyOfCall(const std::string &owner, const std::string &key_id) const;

 private:
  const Settings &settings_;
  Principals principals_;  // no keys: no authentication
};

}  // namespace ninf::server
