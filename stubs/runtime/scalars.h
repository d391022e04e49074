// Decoding IN scalar arguments (one decode per type, as in Mercury's proc
// layer): a wire Value becomes the C object the routine expects, and integer
// values also feed the dimension evaluation.
#pragma once

#include <cstdint>
#include <string>

#include "ninf.pb.h"
#include "status.h"

namespace ninf::stub {

// Storage for one IN scalar, big and aligned enough for a double _Complex.
struct ScalarSlot {
  alignas(16) unsigned char bytes[16] = {};
  std::string text;  // TYPE_STRING

  // What the invoke function receives for this scalar (see ninf_stub.h).
  void *Pointer() { return is_string ? static_cast<void *>(text.data()) : bytes; }
  bool is_string = false;
};

// Decodes `v` as parameter `p` into `slot`; for integer types also stores the
// value in *int_value. Errors: NINF_ERR_ARGUMENT_MISMATCH naming the
// parameter (wrong kind of value, integer out of the type's range).
Status DecodeScalar(const wire::Param &p, const wire::Value &v, ScalarSlot *slot, int64_t *int_value);

}  // namespace ninf::stub
