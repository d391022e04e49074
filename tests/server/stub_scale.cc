// A Ninf executable built on the real stub runtime (stubs/runtime), the way
// ninf-gen's output is, to test ninfd with the runtime every generated
// executable uses:
//
//   scale(IN long n, IN double factor, IN long sleep_ms, INOUT double a[n])
//
// multiplies a by factor after sleeping sleep_ms (to make slow calls).
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "stubs/runtime/ninf_stub.h"

// Like ninf-gen's output, this program embeds its interface as serialized
// protobuf bytes and does not link the protobuf classes itself (the runtime
// library carries them; linking them twice would register ninf.proto twice).
namespace {

void Invoke(void **args) {
  long n = *static_cast<long *>(args[0]);
  double factor = *static_cast<double *>(args[1]);
  long sleep_ms = *static_cast<long *>(args[2]);
  auto *a = static_cast<double *>(args[3]);
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
  for (long i = 0; i < n; ++i) a[i] *= factor;
}

// A minimal protobuf writer: varint and length-delimited fields only.
std::string Varint(uint64_t v) {
  std::string out;
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    out += static_cast<char>(v ? byte | 0x80 : byte);
  } while (v);
  return out;
}

std::string IntField(int field, uint64_t v) { return Varint(uint64_t(field) << 3) + Varint(v); }

std::string BytesField(int field, const std::string &bytes) {
  return Varint((uint64_t(field) << 3) | 2) + Varint(bytes.size()) + bytes;
}

// ninf.wire.Param; enum values from ninf.proto (MODE_IN 0, MODE_INOUT 2,
// TYPE_LONG 3, TYPE_DOUBLE 5; ExprNode.Op PARAM 1).
std::string Param(const std::string &name, int mode, int type, bool dim_is_param0) {
  std::string p = BytesField(1, name) + IntField(2, mode) + IntField(3, type);
  if (dim_is_param0) {
    std::string node = IntField(1, 1) + IntField(2, 0);  // PARAM, sint64 0
    p += BytesField(4, BytesField(1, node));             // dims { nodes { ... } }
  }
  return p;
}

// scale(IN long n, IN double factor, IN long sleep_ms, INOUT double a[n]).
std::string Interface() {
  return BytesField(1, "scale") + BytesField(2, "server_test") +
         BytesField(3, "a *= factor, after sleep_ms") + BytesField(4, Param("n", 0, 3, false)) +
         BytesField(4, Param("factor", 0, 5, false)) +
         BytesField(4, Param("sleep_ms", 0, 3, false)) + BytesField(4, Param("a", 2, 5, true));
}

}  // namespace

int main(int argc, char **argv) {
  const std::string iface = Interface();
  return ninf_stub_main(argc, argv, reinterpret_cast<const unsigned char *>(iface.data()),
                        iface.size(), Invoke);
}
