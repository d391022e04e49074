#include "server/client_connection.h"

#include <openssl/crypto.h>

#include <cstring>

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

Status ClientConnection::NewRedirectKey() {
  NINF_RETURN_IF_ERROR(tls::RandomPsk(&psk_));
  redirect_key_ = true;
  return Status::Ok();
}

void ClientConnection::SendRedirect(const ControlMsg &redirected) {
  wire::Redirect msg;
  msg.set_host(std::string(redirected.redirect_host,
                           strnlen(redirected.redirect_host, sizeof redirected.redirect_host)));
  msg.set_port(redirected.redirect_port);
  msg.set_token(redirected.redirect_token, sizeof redirected.redirect_token);
  if (redirect_key_) msg.set_psk(psk_.data(), psk_.size());
  Reply(FRAME_REDIRECT, &msg, /*secret=*/redirect_key_);
  if (redirect_key_) OPENSSL_cleanse(msg.mutable_psk()->data(), msg.psk().size());
  OPENSSL_cleanse(psk_.data(), psk_.size());
  redirect_key_ = false;
}

}  // namespace ninf::server
