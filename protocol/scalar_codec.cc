#include "protocol/scalar_codec.h"

#include <complex>
#include <cstring>
#include <limits>

namespace ninf {
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
Status StoreInteger(const wire::Param &p, const wire::Value &v, ScalarSlot *slot,
                    int64_t *int_value) {
  if (v.v_case() != wire::Value::kI) return Mismatch(p, "an integer");
  // char is accepted as signed or unsigned: C code passes either.
  int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (sizeof(T) == 1) lo = -128, hi = 255;
  if (v.i() < lo || v.i() > hi)
    return Status(NINF_ERR_ARGUMENT_MISMATCH, "argument '" + p.name() + "' = " +
                                                  std::to_string(v.i()) + " does not fit its type");
  *int_value = v.i();
  Store(slot, static_cast<T>(v.i()));
  return Status::Ok();
}

template <typename T>
Status StoreReal(const wire::Param &p, const wire::Value &v, ScalarSlot *slot) {
  if (v.v_case() != wire::Value::kD) return Mismatch(p, "a real number");
  Store(slot, static_cast<T>(v.d()));
  return Status::Ok();
}

template <typename T>
Status StoreComplex(const wire::Param &p, const wire::Value &v, ScalarSlot *slot) {
  if (v.v_case() != wire::Value::kC) return Mismatch(p, "a complex number");
  Store(slot, std::complex<T>(static_cast<T>(v.c().re()), static_cast<T>(v.c().im())));
  return Status::Ok();
}

Status StoreString(const wire::Param &p, const wire::Value &v, ScalarSlot *slot) {
  if (v.v_case() != wire::Value::kS) return Mismatch(p, "a string");
  if (v.s().find('\0') != std::string::npos) return Mismatch(p, "a string without NUL bytes");
  slot->text = v.s();
  slot->is_string = true;
  return Status::Ok();
}

}  // namespace

Status EncodeScalar(const wire::Param &p, const ninf_binding_value &v, wire::Value *out,
                    int64_t *int_value) {
  const ninf_type_info *info = ninf_type_info_of(p.type());
  if (!info) return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() + "' has an unknown type");
  switch (info->cls) {
    case NINF_CLASS_INTEGER:
      out->set_i(v.i);
      *int_value = v.i;
      return Status::Ok();
    case NINF_CLASS_REAL:
      out->set_d(v.d);
      return Status::Ok();
    case NINF_CLASS_COMPLEX:
      out->mutable_c()->set_re(v.re);
      out->mutable_c()->set_im(v.im);
      return Status::Ok();
    case NINF_CLASS_STRING:
      if (!v.s)
        return Status(NINF_ERR_INVALID_ARGUMENT, "string argument '" + p.name() + "' is NULL");
      out->set_s(v.s);
      return Status::Ok();
  }
  return Status(NINF_ERR_INTERNAL, "scalar '" + p.name() + "' has no encoding");
}

Status DecodeScalar(const wire::Param &p, const wire::Value &v, ScalarSlot *slot,
                    int64_t *int_value) {
  if (!ninf_type_info_of(p.type()))
    return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() + "' has an unknown type");
  switch (static_cast<ninf_type>(p.type())) {
    case NINF_TYPE_CHAR:
      return StoreInteger<int8_t>(p, v, slot, int_value);
    case NINF_TYPE_SHORT:
      return StoreInteger<int16_t>(p, v, slot, int_value);
    case NINF_TYPE_INT:
      return StoreInteger<int32_t>(p, v, slot, int_value);
    case NINF_TYPE_LONG:
      return StoreInteger<int64_t>(p, v, slot, int_value);
    case NINF_TYPE_FLOAT:
      return StoreReal<float>(p, v, slot);
    case NINF_TYPE_DOUBLE:
      return StoreReal<double>(p, v, slot);
    case NINF_TYPE_SCOMPLEX:
      return StoreComplex<float>(p, v, slot);
    case NINF_TYPE_DCOMPLEX:
      return StoreComplex<double>(p, v, slot);
    case NINF_TYPE_STRING:
      return StoreString(p, v, slot);
  }
  return Status(NINF_ERR_PROTOCOL, "parameter '" + p.name() + "' has an unknown type");
}

}  // namespace ninf
