// Who calls: the users of a daemon (ninfd, ninf-meta), their principals
// (keys, certificate subjects), their groups, which functions they may call
// and their quotas (docs/security.md#users). Policy only, as pure functions
// over plain values, unit-tested in tests/server/users_test.cc; each daemon
// asks them for each request (ninfd: server/user_policy.h; ninf-meta:
// metaserver/meta_users.h).
//
//   [users.alice]                     principals: one or both of
//   key_file = "/etc/ninf/alice.key"    the keys of a file (HMAC handshake)
//   cert_subject = "CN=alice,O=site"    a client certificate's subject
//   groups = ["chem"]                 for allow lists ("group:chem")
//   max_slots = 2 ...                 quotas (UserSpec; ninfd's alone)
//
// The daemon's own `key_file` stays: its keys belong to the user "default"
// (kDefaultUser). A daemon without any key or certificate user serves
// everyone as the anonymous user "" (logged as "-").
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/auth.h"
#include "protocol/status.h"

namespace ninf::daemon {

// The user of the server's own `key_file`.
inline constexpr char kDefaultUser[] = "default";

// One user as its [users.NAME] table says, each quota it leaves out the
// server-wide setting (user_max_slots, ..., store_bytes_per_owner:
// settings.h UserKeys()); a quota of 0 is no cap.
struct UserSpec {
  std::string key_file{};
  std::string cert_subject{};
  std::vector<std::string> groups{};
  std::string run_as{};
  // What the user sees of others in STATS (--status): "user", its own
  // user.LABEL.* lines; "operator", every user's.
  std::string role{};
  int64_t max_slots = 0;      // calls of the user holding a slot at once
  int64_t max_queued = 0;     // calls of the user waiting for a slot
  int64_t store_bytes = 0;    // bytes of kept data
  int64_t store_entries = 0;  // entries of kept data
  int64_t max_two_phase = 0;  // two-phase results kept (uncollected) at once
  bool operator==(const UserSpec &) const = default;
};

using UserSpecs = std::map<std::string, UserSpec, std::less<>>;

// A user name is letters, digits, '_', '-', '.' (1-64 of them): it appears
// in log lines and metric labels unquoted.
bool ValidUserName(std::string_view name);

// The local account a user's executables run as (`run_as`, ninfd as root):
// resolved when the users are loaded, so that the spawn path needs no
// lookup (it runs between fork and exec).
struct RunAs {
  std::string account{};  // "": none, the executable runs as ninfd
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups{};
  bool set() const { return !account.empty(); }
  bool operator==(const RunAs &) const = default;
};

// What the server knows of its users once their key files are read.
struct Principals {
  auth::KeyRing ring;                                  // every key of every user
  std::map<std::string, std::string> user_of_key;      // key id -> user
  std::map<std::string, std::string> user_of_subject;  // certificate subject -> user
  std::map<std::string, std::vector<std::string>, std::less<>> groups;  // user -> groups
  std::map<std::string, RunAs, std::less<>> run_as;  // users with a run_as account
  std::set<std::string, std::less<>> operators;      // users whose role is "operator"
  bool keyed() const { return !ring.keys.empty(); }
};

// Reads `global_key_file` ("" none: its keys are kDefaultUser's) and every
// user's key_file, and checks the tables. Errors (NINF_ERR_CONFIG, naming the
// table): a user with neither key_file nor cert_subject, an unreadable or
// unsafe key file, a key that two users (or a user and key_file) share, two
// users with one cert_subject, a [users.default] table beside key_file, a
// run_as account that does not exist, or run_as when ninfd is not root.
Status LoadPrincipals(const std::string &global_key_file, const UserSpecs &users, Principals *out);

// What a connection proved, for Identify.
struct Proved {
  bool authenticated = false;  // by the HMAC handshake, with key `key_id`
  std::string key_id{};
  std::string peer_subject{};  // the verified client certificate's subject ("": none)
};

// Who a connection is, from what it proved and the principals now.
struct Identity {
  std::string user{};    // "": anonymous
  bool revoked = false;  // it proved a key (or subject) no user holds any more
};

// A key proved wins over a certificate. A key whose id no user holds now was
// removed by a reload: revoked. A certificate subject that no user names is
// the anonymous user (what such a connection may do is the handshake's and
// the allow lists' to say).
Identity Identify(const Principals &p, const Proved &proved);

// Must a connection with this verified certificate subject ("": none)
// still prove a key? Yes when the daemon has keys and the subject is
// nobody's (ninfd and ninf-meta ask it before dispatching a request).
bool NeedsKey(const Principals &p, const std::string &peer_subject);

// Is `user` one of the principals' users now (false once a reload removed
// it, or all its keys and its subject)?
bool Knows(const Principals &p, std::string_view user);

// May `user` call a function whose allow list is `allow`? An empty list
// lets everyone in; entries are user names or "group:NAME". The anonymous
// user is allowed only by an empty list.
bool MayCall(const Principals &p, std::string_view user, const std::vector<std::string> &allow);

// A user's quotas in force (0: no cap).
struct UserQuota {
  int64_t slots = 0;
  int64_t queued = 0;
  int64_t store_bytes = 0;
  int64_t store_entries = 0;
  int64_t two_phase = 0;
};
UserQuota QuotaOf(const UserSpec &user);

// May an allow list name `entry`: a user name, or "group:NAME".
bool ValidAllowEntry(std::string_view entry);

// The label of `user` in metrics: itself while fewer than `max_labels`
// users have one, "other" after that (a label per user forever would let
// users grow the metrics without bound). `seen` remembers who has one.
std::string UserLabel(std::set<std::string, std::less<>> *seen, std::string_view user,
                      std::size_t max_labels);

// "-" for the anonymous user in logs, the name otherwise.
inline std::string_view ShownUser(std::string_view user) { return user.empty() ? "-" : user; }

// The user.LABEL.* lines of STATS a connection of `user` (one who is not an
// operator) sees: its own label among those given out (`seen`, at most
// `max_labels`), "other" once they are all given and it has none, "" (no
// line: it has made no call) while labels are left.
std::string OwnStatsLabel(const std::set<std::string, std::less<>> &seen, std::string_view user,
                          std::size_t max_labels);

}  // namespace ninf::daemon
