// The per-thread last error of libninf (Ninf_get_error, Ninf_perror), set
// by both APIs so that a GridRPC user also gets the detail message.
#pragma once

#include <string>

#include "protocol/status.h"

namespace ninf::client {

// Stores `st` as this thread's last error; returns 0 if ok, else -1.
int RecordStatus(const Status &st);

int LastErrorCode();
const std::string &LastErrorDetail();

}  // namespace ninf::client
