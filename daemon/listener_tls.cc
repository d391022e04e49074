#include "daemon/listener_tls.h"

#include <utility>

namespace ninf::daemon {

Status LoadListenerTls(const tls::ServerFiles &files, tls::Context *ctx) {
  if (files.cert.empty()) {
    if (!files.key.empty() || !files.client_ca.empty())
      return Status(NINF_ERR_CONFIG, "tls_key and tls_client_ca need tls_cert");
    ctx->reset();
    return Status::Ok();
  }
  tls::Context fresh;
  NINF_RETURN_IF_ERROR(tls::MakeServerContext(files, &fresh));
  *ctx = std::move(fresh);
  return Status::Ok();
}

}  // namespace ninf::daemon
