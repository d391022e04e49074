// Closing a libuv handle a daemon may or may not have opened (a timer
// started at run time, an async wake-up): once, and only if it is open.
// The handle is embedded in its owner, which must outlive the close (libuv
// touches the handle until its close callback).
#pragma once

#include <uv.h>

namespace ninf::daemon {

template <class Handle>
void CloseIfOpen(Handle *handle, bool *open, uv_close_cb on_closed = nullptr) {
  if (!*open) return;
  *open = false;
  uv_close(reinterpret_cast<uv_handle_t *>(handle), on_closed);
}

}  // namespace ninf::daemon
