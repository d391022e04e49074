// ninf-meta's users: ninfd's user model (daemon/users.h: keys or
// certificate subjects, groups, allow lists per function) over ninf-meta's
// own key_file and its [users.NAME] / [limits.NAME] tables, and what each
// may do here:
//   - the keys of key_file (the user "default"): everything, registering
//     servers included (ninfd proves the first key of its key_file);
//   - a [users.NAME] user (a key of its key_file, or its client
//     certificate's subject under tls_client_ca): a client. It may have
//     placed the functions whose allow list lets it in, report outcomes and
//     probes, list, query and ask STATS; it may not register a server or
//     report one's load, since a client registering a server of its own
//     would be sent other users' calls and their arrays;
//   - without keys and users: everyone may do everything, as before.
// The decisions are pure functions (MayServe, MayPlace), unit-tested in
// tests/metaserver/meta_users_test.cc.
#pragma once

#include <string>
#include <vector>

#include "daemon/connection.h"
#include "daemon/users.h"
#include "protocol/auth.h"
#include "protocol/status.h"

namespace ninf::meta {

class MetaUsers {
 public:
  // Reads `key_file` ("" none) and every user's key file
  // (daemon::LoadPrincipals). On an error nothing changes.
  Status Load(const std::string &key_file, const daemon::UserSpecs &users);

  bool keyed() const { return principals_.keyed(); }
  const auth::KeyRing &ring() const { return principals_.ring; }
  const daemon::Principals &principals() const { return principals_; }
  // A connection with this verified certificate subject ("": none) must
  // still prove a key: keys are required and the subject is nobody's.
  bool NeedsKey(const std::string &peer_subject) const;
  // Who `conn` is now (revoked once a reload took its key away).
  daemon::Identity Of(const daemon::Connection &conn) const;

 private:
  daemon::Principals principals_;
};

// May `who` ask anything more? NINF_ERR_AUTH once a reload took its key
// away (every request of an authenticated connection asks).
Status MayAsk(const daemon::Identity &who);

// May `who` register a server or report its load here? NINF_ERR_AUTH for
// a revoked key, NINF_ERR_DENIED for a [users.NAME] user (naming it and
// what to set instead).
Status MayServe(const daemon::Identity &who);

// May `who` have `function` placed, given the function's allow list?
// NINF_ERR_AUTH for a revoked key, NINF_ERR_DENIED naming the user, the
// function and the table that leaves it out.
Status MayPlace(const daemon::Principals &p, const daemon::Identity &who,
                const std::string &function, const std::vector<std::string> &allow);

}  // namespace ninf::meta
