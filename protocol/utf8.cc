#include "protocol/utf8.h"

#include <cstddef>

namespace ninf {
namespace {

bool IsContinuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// The length of the character starting with `lead` and the range its second
// byte must fall in (RFC 3629, table in section 4); 0 for a bad lead byte.
struct Lead {
  std::size_t length;
  unsigned char second_min, second_max;
};

Lead Classify(unsigned char lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead >= 0xC2 && lead <= 0xDF) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};  // no overlong forms
  if (lead == 0xED) return {3, 0x80, 0x9F};  // no surrogates
  if (lead >= 0xE1 && lead <= 0xEF) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};  // no overlong forms
  if (lead >= 0xF1 && lead <= 0xF3) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};  // nothing above U+10FFFF
  return {0, 0, 0};
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    Lead lead = Classify(static_cast<unsigned char>(text[i]));
    if (lead.length == 0 || text.size() - i < lead.length) return false;
    if (lead.length > 1) {
      auto second = static_cast<unsigned char>(text[i + 1]);
      if (second < lead.second_min || second > lead.second_max) return false;
      for (std::size_t k = 2; k < lead.length; ++k)
        if (!IsContinuation(static_cast<unsigned char>(text[i + k]))) return false;
    }
    i += lead.length;
  }
  return true;
}

}  // namespace ninf
