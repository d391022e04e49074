// `NAME --interface`: the executable's interface in protobuf text format,
// written by hand so that the executable needs only the lite protobuf
// runtime (no descriptors, no TextFormat). The output is byte for byte what
// google::protobuf::TextFormat::PrintToString prints for the same message
// (ninfd reads it back with TextFormat).
#pragma once

#include <string>

#include "ninf.pb.h"

namespace ninf::stub {

std::string InterfaceText(const wire::FunctionInterface &iface);

}  // namespace ninf::stub
