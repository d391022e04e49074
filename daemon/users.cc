// Users: principals, identity, access and quotas (users.h).
#include "daemon/users.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

namespace ninf::daemon {
namespace {

Status Bad(const std::string &table, const std::string &what) {
  return Status(NINF_ERR_CONFIG, table + ": " + what);
}

// Adds the keys of `path` to *out as `user`'s. A key already held by
// another user is an error: a connection must name one user.
Status AddKeys(const std::string &table, const std::string &user, const std::string &path,
               Principals *out) {
  auth::KeyRing ring;
  if (Status st = auth::LoadKeyFile(path, &ring); !st.ok()) return Bad(table, st.message());
  for (auth::Key &key : ring.keys) {
    auto [it, fresh] = out->user_of_key.emplace(key.id, user);
    if (!fresh)
      return Bad(table, "a key of " + path + " is also user '" + it->second +
                            "''s: every key belongs to one user");
    out->ring.keys.push_back(std::move(key));
  }
  return Status::Ok();
}

// The account `name` (its uid, primary group and supplementary groups).
Status ResolveAccount(const std::string &table, const std::string &name, RunAs *out) {
  if (::geteuid() != 0)
    return Bad(table, "run_as = \"" + name +
                          "\" needs ninfd to run as root (it switches to the account to start "
                          "the user's executables)");
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
    return Bad(table, "run_as = \"" + name + "\": no such local account");
  if (pw.pw_uid == 0) return Bad(table, "run_as = \"" + name + "\" is root: that maps nothing");
  RunAs r;
  r.account = name;
  r.uid = pw.pw_uid;
  r.gid = pw.pw_gid;
  int n = 64;
  r.groups.resize(static_cast<std::size_t>(n));
  if (::getgrouplist(name.c_str(), pw.pw_gid, r.groups.data(), &n) < 0) {
    r.groups.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(name.c_str(), pw.pw_gid, r.groups.data(), &n) < 0)
      return Bad(table, "run_as = \"" + name + "\": cannot read its groups");
  }
  r.groups.resize(static_cast<std::size_t>(n));
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace

bool ValidUserName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

Status LoadPrincipals(const std::string &global_key_file, const UserSpecs &users, Principals *out) {
  Principals p;
  if (!global_key_file.empty()) {
    if (users.count(kDefaultUser))
      return Bad("users.default",
                 "the user 'default' is the server's own key_file's; name this user otherwise");
    NINF_RETURN_IF_ERROR(AddKeys("key_file", kDefaultUser, global_key_file, &p));
    p.ring.path = global_key_file;
  }
  for (const auto &[name, spec] : users) {
    const std::string table = "users." + name;
    if (spec.key_file.empty() && spec.cert_subject.empty())
      return Bad(table, "a user needs a key_file or a cert_subject to be recognised by");
    if (!spec.key_file.empty()) NINF_RETURN_IF_ERROR(AddKeys(table, name, spec.key_file, &p));
    if (!spec.cert_subject.empty()) {
      auto [it, fresh] = p.user_of_subject.emplace(spec.cert_subject, name);
      if (!fresh)
        return Bad(table, "cert_subject \"" + spec.cert_subject + "\" is also user '" + it->second +
                              "''s");
    }
    p.groups[name] = spec.groups;
    if (spec.role == "operator") p.operators.insert(name);
    if (!spec.run_as.empty())
      NINF_RETURN_IF_ERROR(ResolveAccount(table, spec.run_as, &p.run_as[name]));
  }
  if (p.ring.path.empty() && !p.ring.keys.empty()) p.ring.path = "[users]";
  *out = std::move(p);
  return Status::Ok();
}

Identity Identify(const Principals &p, const Proved &proved) {
  Identity id;
  if (proved.authenticated) {
    auto it = p.user_of_key.find(proved.key_id);
    if (it == p.user_of_key.end())
      id.revoked = true;
    else
      id.user = it->second;
    return id;
  }
  if (!proved.peer_subject.empty()) {
    auto it = p.user_of_subject.find(proved.peer_subject);
    if (it != p.user_of_subject.end()) id.user = it->second;
  }
  return id;
}

bool NeedsKey(const Principals &p, const std::string &peer_subject) {
  if (!p.keyed()) return false;
  return peer_subject.empty() || !p.user_of_subject.count(peer_subject);
}

bool Knows(const Principals &p, std::string_view user) {
  for (const auto &[key, u] : p.user_of_key)
    if (u == user) return true;
  for (const auto &[subject, u] : p.user_of_subject)
    if (u == user) return true;
  return false;
}

bool MayCall(const Principals &p, std::string_view user, const std::vector<std::string> &allow) {
  if (allow.empty()) return true;
  if (user.empty()) return false;
  constexpr std::string_view kGroup = "group:";
  const auto groups = p.groups.find(user);
  for (const std::string &entry : allow) {
    if (!entry.starts_with(kGroup)) {
      if (entry == user) return true;
    } else if (groups != p.groups.end()) {
      const std::string_view group = std::string_view(entry).substr(kGroup.size());
      if (std::find(groups->second.begin(), groups->second.end(), group) != groups->second.end())
        return true;
    }
  }
  return false;
}

UserQuota QuotaOf(const UserSpec &user) {
  return {.slots = user.max_slots,
          .queued = user.max_queued,
          .store_bytes = user.store_bytes,
          .store_entries = user.store_entries,
          .two_phase = user.max_two_phase};
}

bool ValidAllowEntry(std::string_view entry) {
  return ValidUserName(entry.starts_with("group:") ? entry.substr(6) : entry);
}

std::string UserLabel(std::set<std::string, std::less<>> *seen, std::string_view user,
                      std::size_t max_labels) {
  const std::string shown(ShownUser(user));
  if (seen->count(shown)) return shown;
  if (seen->size() >= max_labels) return "other";
  seen->insert(shown);
  return shown;
}

std::string OwnStatsLabel(const std::set<std::string, std::less<>> &seen, std::string_view user,
                          std::size_t max_labels) {
  const std::string shown(ShownUser(user));
  if (seen.count(shown)) return shown;
  return seen.size() >= max_labels ? "other" : "";
}

}  // namespace ninf::daemon
