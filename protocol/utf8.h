// UTF-8 validity of the text the protocol carries in protobuf `string`
// fields: a peer's protobuf refuses a whole message with one bad byte in
// such a field, so everything that ends up in one is checked where it
// enters (ninf-gen for IDL text, ValidateInterface for interfaces).
#pragma once

#include <string_view>

#include "protocol/protocol_export.h"

namespace ninf {

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
NINF_PROTOCOL_API bool IsValidUtf8(std::string_view text);

}  // namespace ninf
