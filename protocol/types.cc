// Keeps the type table (ninf_types.h) and ninf.proto equal: a type added to
// one and not the other, or numbered differently, does not compile.
#include "ninf.pb.h"
#include "protocol/ninf_types.h"

namespace ninf {
namespace {

#define NINF_TYPE_CHECK_(NAME, Name, value, keyword, ctype, bytes, cls, kind) \
  static_assert(NINF_TYPE_##NAME == static_cast<int>(wire::TYPE_##NAME),      \
                "ninf.proto TYPE_" #NAME " differs from the table");
NINF_TYPE_MAP(NINF_TYPE_CHECK_)
#undef NINF_TYPE_CHECK_
static_assert(NINF_TYPE_COUNT == wire::Type_ARRAYSIZE,
              "ninf.proto's Type enum and NINF_TYPE_MAP list different types");

// ninf_type_info_of() indexes rows by value: values must be 0, 1, 2, ...
constexpr int kRowValues[] = {
#define NINF_TYPE_VALUE_(NAME, Name, value, keyword, ctype, bytes, cls, kind) value,
    NINF_TYPE_MAP(NINF_TYPE_VALUE_)
#undef NINF_TYPE_VALUE_
};
constexpr bool ValuesAreIndexes() {
  for (int i = 0; i < NINF_TYPE_COUNT; ++i)
    if (kRowValues[i] != i) return false;
  return true;
}
static_assert(ValuesAreIndexes(), "NINF_TYPE_MAP values must run 0, 1, 2, ... in row order");

#define NINF_MODE_CHECK_(NAME, value, word)                              \
  static_assert(NINF_MODE_##NAME == static_cast<int>(wire::MODE_##NAME), \
                "ninf.proto MODE_" #NAME " differs");
NINF_MODE_MAP(NINF_MODE_CHECK_)
#undef NINF_MODE_CHECK_
static_assert(wire::Mode_ARRAYSIZE == NINF_MODE_WORK + 1,
              "ninf.proto's Mode enum and NINF_MODE_MAP differ");

}  // namespace
}  // namespace ninf
