// The public surface of libninf_protocol. The library is built with hidden
// visibility; what its users (libninf, ninfd, the stub runtime, ninf-gen,
// tests) may call is marked NINF_PROTOCOL_API, and so are the protobuf
// classes of ninf.proto (protoc's dllexport_decl). Everything else stays
// inside the library.
#pragma once

#ifndef NINF_PROTOCOL_API
#define NINF_PROTOCOL_API __attribute__((visibility("default")))
#endif
