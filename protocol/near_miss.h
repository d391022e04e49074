// "did you mean ...?": the one guess at a mistyped name, for the daemons'
// flags and config keys (daemon/settings_table.cc) and the client's config
// file (client/client_config.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/protocol_export.h"

namespace ninf {

// The nearest of `names` to `word` when it is a likely typo of it (an edit
// distance of at most 2, and less than half the word's length), else "".
NINF_PROTOCOL_API std::string NearMiss(std::string_view word,
                                       const std::vector<std::string> &names);

}  // namespace ninf
