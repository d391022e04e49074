#include "scalars.h"

#include <complex>
#include <cstring>
#include <limits>

namespace ninf::stub {
namespace {

template <typename T>
void Store(ScalarSlot *slot, T value) {
  static_assert(sizeof(T) <= sizeof slot->bytes);
  std::memcpy(slot->bytes, &value, sizeof value);
}

Status Mismatch(const wire::Param &p, const char *want) {
  return Status(NINF_ERR_ARGUMENT_MISMATCH, "argument '" + p.name() + "' must be " + want);
}

template <typename T>
Status StoreInteger(const wire::Param &p, int64_t v, ScalarSlot *slot) {
  // char is accepted as signed or unsigned: C code passes either.
  int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (sizeof(T) == 1) lo = -128, hi = 255;
  if (v < lo || v > hi)
    return Status(NINF_ERR_ARGUMENT_MISMATCH,
                  "argument '" + p.name() + "' = " + std::to_string(v) + " does not fit its type");
  Store(slot, static_cast<T>(v));
  return Status::Ok();
}

}  // namespace

Status DecodeScalar(const wire::Param &p, const wire::Value &v, ScalarSlot *slot, int64_t *int_value) {
  switch (p.type()) {
    case wire::TYPE_CHAR:
    case wire::TYPE_SHORT:
    case wire::TYPE_INT:
    case wire::TYPE_LONG: {
      if (v.v_case() != wire::Value::kI) return Mismatch(p, "an integer");
      *int_value = v.i();
      if (p.type() == wire::TYPE_CHAR) return StoreInteger<int8_t>(p, v.i(), slot);
      if (p.type() == wire::TYPE_SHORT) return StoreInteger<int16_t>(p, v.i(), slot);
      if (p.type() == wire::TYPE_INT) return StoreInteger<int32_t>(p, v.i(), slot);
      return StoreInteger<int64_t>(p, v.i(), slot);
    }
    case wire::TYPE_FLOAT:
      if (v.v_case() != wire::Value::kD) return Mismatch(p, "a real number");
      Store(slot, static_cast<float>(v.d()));
      return Status::Ok();
    case wire::TYPE_DOUBLE:
      if (v.v_case() != wire::Value::kD) return Mismatch(p, "a real number");
      Store(slot, v.d());
      return Status::Ok();
    case wire::TYPE_SCOMPLEX:
      if (v.v_case() != wire::Value::kC) return Mismatch(p, "a complex number");
      Store(slot, std::complex<float>(static_cast<float>(v.c().re()), static_cast<float>(v.c().im())));
      return Status::Ok();
    case wire::TYPE_DCOMPLEX:
      if (v.v_case() != wire::Value::kC) return Mismatch(p, "a complex number");
      Store(slot, std::complex<double>(v.c().re(), v.c().im()));
      return Status::Ok();
    case wire::TYPE_STRING:
      if (v.v_case() != wire::Value::kS) return Mismatch(p, "a string");
      if (v.s().find('\0') != std::string::npos) return Mismatch(p, "a string without NUL bytes");
      slot->text = v.s();
      slot->is_string = true;
      return Status::Ok();
    default:
      return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() + "' has an unknown type");
  }
}

}  // namespace ninf::stub
