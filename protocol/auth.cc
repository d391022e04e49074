#include "protocol/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/wire.h"

namespace ninf::auth {
namespace {

// Labels keep the two proofs apart: a server proof can never be replayed
// as a client proof, even when an attacker picks the nonces.
constexpr std::string_view kServerLabel{"ninf-auth-v1 server", 20};  // with its NUL
constexpr std::string_view kClientLabel{"ninf-auth-v1 client", 20};
constexpr std::string_view kKeyIdLabel{"ninf-auth-v1 key id", 20};
// A key file is a few lines; anything much bigger is not one.
constexpr off_t kMaxKeyFileBytes = 64 * 1024;

Status ConfigError(const std::string &path, const std::string &what) {
  return Status(NINF_ERR_CONFIG, "key file " + path + ": " + what);
}

Proof Hmac(const Key &key, std::string_view label, const Nonce &cn, const Nonce &sn) {
  std::string data(label);
  data.append(reinterpret_cast<const char *>(cn.data()), cn.size());
  data.append(reinterpret_cast<const char *>(sn.data()), sn.size());
  Proof out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.secret.data(), static_cast<int>(key.secret.size()),
       reinterpret_cast<const unsigned char *>(data.data()), data.size(), out.data(), &len);
  return out;
}

std::string Trim(const std::string &line) {
  const char *blanks = " \t\r";
  std::size_t b = line.find_first_not_of(blanks);
  if (b == std::string::npos) return "";
  return line.substr(b, line.find_last_not_of(blanks) - b + 1);
}

// The permission rules of ssh for private keys: only the owner may read the
// file, and the owner is whoever runs us (or root).
Status CheckOwnership(const std::string &path, const struct stat &st) {
  if (!S_ISREG(st.st_mode)) return ConfigError(path, "not a regular file");
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return ConfigError(path, "owned by uid " + std::to_string(st.st_uid) + ", not by uid " +
                                 std::to_string(::geteuid()) + " who runs this program");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return ConfigError(path, std::string("group or others may access it (mode ") + mode +
                                 "): run chmod 600 " + path);
  }
  if (st.st_size > kMaxKeyFileBytes) return ConfigError(path, "larger than 64 KiB");
  return Status::Ok();
}

}  // namespace

const Key *KeyRing::Find(std::string_view id) const {
  for (const Key &k : keys)
    if (k.id == id) return &k;
  return nullptr;
}

Status LoadKeyFile(const std::string &path, KeyRing *out) {
  // Opened first and checked through the descriptor, so that the file
  // checked is the file read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return ConfigError(path, std::strerror(errno));
  struct stat st {};
  Status checked =
      ::fstat(fd, &st) == 0 ? CheckOwnership(path, st) : ConfigError(path, std::strerror(errno));
  std::string text;
  if (checked.ok()) {
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  ::close(fd);
  NINF_RETURN_IF_ERROR(checked);

  KeyRing ring;
  ring.path = path;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::string secret = Trim(line);
    if (secret.empty() || secret[0] == '#') continue;
    if (secret.size() < kMinKeySize)
      return ConfigError(path, "the key on line " + std::to_string(number) + " is shorter than " +
                                   std::to_string(kMinKeySize) +
                                   " characters (make one with: openssl rand -hex 32)");
    ring.keys.push_back({secret, KeyIdOf(secret)});
  }
  if (ring.keys.empty()) return ConfigError(path, "no key in it (one per line)");
  *out = std::move(ring);
  return Status::Ok();
}

std::string KeyIdOf(std::string_view secret) {
  std::string data(kKeyIdLabel);
  data.append(secret);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char *>(data.data()), data.size(), digest);
  return std::string(reinterpret_cast<const char *>(digest), kKeyIdSize);
}

Status MakeNonce(Nonce *out) {
  if (RAND_bytes(out->data(), static_cast<int>(out->size())) != 1)
    return Status(NINF_ERR_INTERNAL, "the random number generator failed");
  return Status::Ok();
}

Proof ServerProof(const Key &key, const Nonce &cn, const Nonce &sn) {
  return Hmac(key, kServerLabel, cn, sn);
}

Proof ClientProof(const Key &key, const Nonce &cn, const Nonce &sn) {
  return Hmac(key, kClientLabel, cn, sn);
}

bool ProofMatches(const Proof &expected, std::string_view received) {
  if (received.size() != expected.size()) return false;  // the size is public
  return CRYPTO_memcmp(expected.data(), received.data(), expected.size()) == 0;
}

bool ToNonce(std::string_view bytes, Nonce *out) {
  if (bytes.size() != out->size()) return false;
  std::memcpy(out->data(), bytes.data(), out->size());
  return true;
}

Status AuthenticateToServer(Channel &ch, const Key &key) {
  Nonce cn{};
  NINF_RETURN_IF_ERROR(MakeNonce(&cn));
  wire::AuthRequest request;
  request.set_key_id(key.id);
  request.set_client_nonce(cn.data(), cn.size());
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_AUTH, &request));

  wire::Challenge challenge;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_CHALLENGE, 0, &challenge, &h));
  Nonce sn{};
  if (!ToNonce(challenge.server_nonce(), &sn))
    return Status(NINF_ERR_PROTOCOL, "the server's challenge has no valid nonce");
  if (!ProofMatches(ServerProof(key, cn, sn), challenge.server_proof()))
    return Status(NINF_ERR_AUTH,
                  "the server could not prove that it holds our key (a different key, or "
                  "not the server we meant)");

  Proof proof = ClientProof(key, cn, sn);
  wire::AuthProof answer;
  answer.set_client_proof(proof.data(), proof.size());
  return ch.SendFrame(FRAME_PROOF, &answer);
}

}  // namespace ninf::auth
