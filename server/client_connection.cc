#include "server/client_connection.h"

#include <openssl/crypto.h>

#include "ninf.pb.h"

namespace ninf::server {

Status ClientConnection::SendHandover() {
  if (!transport().active() || state() != State::kParked || handover_sent_)
    return Status(NINF_ERR_INTERNAL, "no TLS session to hand over");
  NINF_RETURN_IF_ERROR(tls::RandomPsk(&psk_));
  wire::Handover msg;
  msg.set_psk(psk_.data(), psk_.size());
  handover_sent_ = true;
  Reply(FRAME_HANDOVER, &msg, /*secret=*/true);
  OPENSSL_cleanse(msg.mutable_psk()->data(), msg.psk().size());
  return Status::Ok();
}

}  // namespace ninf::server
