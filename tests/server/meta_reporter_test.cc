// What ninfd logs when ninf-meta refuses its key handshake
// (MetaReporter::AuthFailureMessage): the metaserver's words are written for
// its clients, and here ninfd is the client, so the message names ninfd's
// key_file and which side needs which key. The real daemons' exchange is
// tests/e2e/ops_test.py.
#include "server/meta_reporter.h"

#include <catch2/catch.hpp>

using ninf::server::MetaReporter;

TEST_CASE("meta_reporter_auth_failure_names_ninfds_setting", "[meta_reporter]") {
  // A keyless ninfd, a keyed ninf-meta.
  CHECK(MetaReporter::AuthFailureMessage(false, "", "127.0.0.1:3100",
                                         "this metaserver requires authentication: ...") ==
        "ninf-meta at 127.0.0.1:3100 requires a key, and ninfd has none: set key_file in "
        "ninfd's settings to a file whose first key is one of ninf-meta's key_file");
  // A keyed ninfd, a keyless ninf-meta.
  CHECK(MetaReporter::AuthFailureMessage(
            true, "/etc/ninf/key", "meta:3100",
            "this server does not authenticate (it has no key_file), so it cannot prove who it "
            "is: run it with the key, or call it without one") ==
        "ninf-meta at meta:3100 has no key_file, and ninfd (key_file /etc/ninf/key) proves "
        "itself with its first key: give ninf-meta a key_file holding that key (its key_file "
        "setting, NINF_META_KEY_FILE)");
  // Both keyed, with different keys.
  const std::string wrong = MetaReporter::AuthFailureMessage(
      true, "/k", "meta:3100",
      "authentication failed: the client's key is not one of this server's");
  CHECK(wrong ==
        "ninf-meta at meta:3100 refused ninfd's key: the first key of ninfd's key_file /k is not "
        "one of ninf-meta's key_file; add it there, or put one of ninf-meta's keys first in /k");
  // Never the client's remedy, which would send the administrator to the
  // wrong file.
  for (const std::string &m :
       {wrong, MetaReporter::AuthFailureMessage(false, "", "m:1", "give the client the key")})
    CHECK_THAT(m, !Catch::Contains("client"));
}
