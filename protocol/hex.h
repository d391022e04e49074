// Bytes as lowercase hex digits, two per byte: tokens, key ids and tickets
// where they are shown or carried as text (launch tokens, the relay's
// messages, two-phase tickets). Header-only.
#pragma once

#include <string>
#include <string_view>

namespace ninf {

inline std::string HexOf(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

}  // namespace ninf
