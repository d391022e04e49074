// Unguessable bytes for capabilities (store tokens, launch tokens).
#pragma once

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <string>

namespace ninf::server {

// `n` bytes from the kernel's random source; "" if it fails.
inline std::string RandomBytes(std::size_t n) {
  std::string bytes(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(bytes.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return {};
    got += static_cast<std::size_t>(r);
  }
  return bytes;
}

}  // namespace ninf::server
