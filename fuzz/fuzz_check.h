// Shared by the fuzz targets (docs/fuzzing.md): a property check that
// crashes loudly, so that libFuzzer keeps the input, and protobuf's logging
// turned off. Never exit() in a target: libFuzzer would not save the input.
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>

// Aborts with `message` when `cond` is false.
#define FUZZ_CHECK(cond, message)                                                               \
  do {                                                                                          \
    if (!(cond)) {                                                                              \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
                   message);                                                                    \
      std::abort();                                                                             \
    }                                                                                           \
  } while (0)

namespace ninf::fuzz {

// protobuf logs every malformed UTF-8 string it parses, and a fuzzer makes
// millions of them. Called from LLVMFuzzerInitialize.
inline void QuietProtobuf() { google::protobuf::SetLogHandler(nullptr); }

}  // namespace ninf::fuzz
