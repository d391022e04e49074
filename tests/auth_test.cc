// protocol/auth.h on its own: key files and their permission checks, the
// proofs, and the client side of the exchange against a hand-driven server
// on a socket pair (the daemon's side is tested in tests/e2e/auth_test.cc).
#include "protocol/auth.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/wire.h"

using namespace ninf;
using namespace ninf::auth;

namespace {

const std::string kSecret = "0123456789abcdef0123456789abcdef";

// A key file with `text` and `mode` in a fresh directory.
struct KeyFileFixture {
  std::string dir;
  KeyFileFixture() {
    char templ[] = "/tmp/ninf-auth-test.XXXXXX";
    REQUIRE(::mkdtemp(templ));
    dir = templ;
  }
  ~KeyFileFixture() { (void)std::system(("rm -rf " + dir).c_str()); }
  std::string Write(const std::string &text, mode_t mode = 0600) const {
    std::string path = dir + "/key";
    std::ofstream(path, std::ios::trunc) << text;
    REQUIRE(::chmod(path.c_str(), mode) == 0);
    return path;
  }
};

Key MakeKey(const std::string &secret) { return {secret, KeyIdOf(secret)}; }

// Plays ninfd's part of one exchange over `fd`, holding `key`; returns the
// status it would answer with.
Status ServeOneExchange(int fd, const Key &key) {
  Channel ch(fd, 5000);
  FrameHeader h;
  wire::AuthRequest request;
  NINF_RETURN_IF_ERROR(ch.RecvHeader(0, &h));
  NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &request));
  Nonce cn{}, sn{};
  REQUIRE(ToNonce(request.client_nonce(), &cn));
  if (request.key_id() != key.id) return ch.SendError(Status(NINF_ERR_AUTH, "unknown key"));
  NINF_RETURN_IF_ERROR(MakeNonce(&sn));
  Proof sp = ServerProof(key, cn, sn);
  wire::Challenge challenge;
  challenge.set_server_nonce(sn.data(), sn.size());
  challenge.set_server_proof(sp.data(), sp.size());
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_CHALLENGE, &challenge));
  wire::AuthProof proof;
  NINF_RETURN_IF_ERROR(ch.RecvHeader(0, &h));
  NINF_RETURN_IF_ERROR(ch.RecvMessage(h, &proof));
  return ProofMatches(ClientProof(key, cn, sn), proof.client_proof())
             ? Status::Ok()
             : Status(NINF_ERR_AUTH, "wrong proof");
}

}  // namespace

TEST_CASE("auth_key_files_are_checked_like_ssh_keys", "[auth]") {
  KeyFileFixture f;
  KeyRing ring;
  SECTION("one key per line, comments and blanks skipped") {
    REQUIRE(LoadKeyFile(f.Write("# current\n  " + kSecret + "  \n\n" + kSecret + "-old\n"), &ring)
                .ok());
    REQUIRE(ring.keys.size() == 2);
    CHECK(ring.keys[0].secret == kSecret);
    CHECK(ring.keys[1].secret == kSecret + "-old");
    CHECK(ring.keys[0].id.size() == kKeyIdSize);
    CHECK(ring.Find(ring.keys[1].id) == &ring.keys[1]);
    CHECK(ring.Find("nonsense") == nullptr);
  }
  SECTION("readable by others: refused, with the remedy") {
    Status st = LoadKeyFile(f.Write(kSecret, 0644), &ring);
    CHECK(st.code() == NINF_ERR_CONFIG);
    CHECK_THAT(st.message(), Catch::Contains("mode 0644") && Catch::Contains("chmod 600"));
    CHECK(LoadKeyFile(f.Write(kSecret, 0640), &ring).code() == NINF_ERR_CONFIG);
    CHECK(LoadKeyFile(f.Write(kSecret, 0400), &ring).ok());
  }
  SECTION("short, empty, missing, not a file") {
    Status st = LoadKeyFile(f.Write("short\n"), &ring);
    CHECK(st.code() == NINF_ERR_CONFIG);
    CHECK_THAT(st.message(), Catch::Contains("line 1") && Catch::Contains("openssl rand"));
    CHECK(LoadKeyFile(f.Write("# nothing\n\n"), &ring).code() == NINF_ERR_CONFIG);
    CHECK(LoadKeyFile(f.dir + "/absent", &ring).code() == NINF_ERR_CONFIG);
    REQUIRE(::chmod(f.dir.c_str(), 0700) == 0);
    CHECK(LoadKeyFile(f.dir, &ring).code() == NINF_ERR_CONFIG);
  }
}

TEST_CASE("auth_proofs_depend_on_key_nonces_and_direction", "[auth]") {
  Key k = MakeKey(kSecret), other = MakeKey(kSecret + "x");
  Nonce a{}, b{};
  REQUIRE(MakeNonce(&a).ok());
  REQUIRE(MakeNonce(&b).ok());
  CHECK(a != b);
  Proof p = ClientProof(k, a, b);
  std::string bytes(reinterpret_cast<const char *>(p.data()), p.size());
  CHECK(ProofMatches(p, bytes));
  CHECK_FALSE(ProofMatches(ClientProof(other, a, b), bytes));
  CHECK_FALSE(ProofMatches(ClientProof(k, b, a), bytes));
  CHECK_FALSE(ProofMatches(ServerProof(k, a, b), bytes));  // no reflection
  CHECK_FALSE(ProofMatches(p, bytes.substr(1)));
  CHECK_FALSE(ProofMatches(p, ""));
  CHECK(KeyIdOf(kSecret) != KeyIdOf(kSecret + "x"));
  CHECK(KeyIdOf(kSecret).find(kSecret.substr(0, 4)) == std::string::npos);
}

TEST_CASE("auth_client_exchange_against_a_server", "[auth]") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  Key key = MakeKey(kSecret);
  SECTION("same key: both sides satisfied") {
    Status served;
    std::thread server([&] { served = ServeOneExchange(sv[1], key); });
    Channel ch(sv[0], 5000);
    CHECK(AuthenticateToServer(ch, key).ok());
    server.join();
    CHECK(served.ok());
  }
  SECTION("a server with another key is refused by the client") {
    Key wrong = MakeKey(kSecret + "x");
    wrong.id = key.id;  // an impostor that claims the client's key
    std::thread server([&] { (void)ServeOneExchange(sv[1], wrong); });
    Channel ch(sv[0], 5000);
    Status st = AuthenticateToServer(ch, key);
    ::shutdown(sv[0], SHUT_RDWR);
    server.join();
    CHECK(st.code() == NINF_ERR_AUTH);
    CHECK_THAT(st.message(), Catch::Contains("could not prove"));
  }
  SECTION("an unknown key: the server's error reaches the client") {
    std::thread server([&] { (void)ServeOneExchange(sv[1], MakeKey(kSecret + "y")); });
    Channel ch(sv[0], 5000);
    Status st = AuthenticateToServer(ch, key);
    server.join();
    CHECK(st.code() == NINF_ERR_AUTH);
  }
  // Each Channel closed its end.
}
