// Scalar arguments on the wire, both directions in one place (Mercury's proc
// layer is the model): the client encodes each IN scalar of a call into a
// wire::Value, the executable's stub runtime decodes it into the C object
// the routine expects. One switch over the type table per direction, with
// no default, so a new type is a compile error here until it is handled.
#pragma once

#include <cstdint>
#include <string>

#include "ninf.pb.h"
#include "protocol/ninf_types.h"
#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// Storage for one decoded IN scalar, big and aligned enough for a
// double _Complex; strings keep their text.
struct ScalarSlot {
  alignas(16) unsigned char bytes[16] = {};
  std::string text;  // NINF_TYPE_STRING
  bool is_string = false;

  // What the stub's invoke function receives for this scalar.
  void *Pointer() { return is_string ? static_cast<void *>(text.data()) : bytes; }
};

// Encodes the client's value `v` of IN scalar `p` into `out`; integer values
// are also stored in *int_value (they feed the dimension evaluation).
// Errors: NINF_ERR_INVALID_ARGUMENT (a NULL string).
NINF_PROTOCOL_API Status EncodeScalar(const wire::Param &p, const ninf_binding_value &v,
                                      wire::Value *out, int64_t *int_value);

// Decodes `v` as parameter `p` into `slot`; for integer types also stores the
// value in *int_value. Errors: NINF_ERR_ARGUMENT_MISMATCH naming the
// parameter (wrong kind of value, integer out of the type's range, NUL in a
// string), NINF_ERR_PROTOCOL (a type outside the table).
NINF_PROTOCOL_API Status DecodeScalar(const wire::Param &p, const wire::Value &v, ScalarSlot *slot,
                                      int64_t *int_value);

}  // namespace ninf
