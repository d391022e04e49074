// Calls for language bindings (ninf_binding.h): the binding fills in the
// values from the interface instead of C varargs, and confirms each array's
// size once the dimensions are known.
#include <memory>
#include <vector>

#include "client/arguments.h"
#include "client/c_boundary.h"
#include "client/last_error.h"
#include "client/ninf_binding.h"
#include "client/remote_call.h"
#include "client/server_address.h"
#include "client/sessions.h"
#include "client/transaction.h"
#include "protocol/interrupt.h"

namespace ninf::client {

Status BuildFromBinding(InterfacePtr iface, const ninf_binding_args *binding, ArgumentList *list) {
  if (!binding || !binding->collect)
    return Status(NINF_ERR_INVALID_ARGUMENT, "no argument collector");
  const int n = iface->params_size();
  std::vector<ninf_param_info> params(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const wire::Param &p = iface->params(i);
    params[i] = {p.name().c_str(), p.mode(), p.type(), IsArray(p) ? 1 : 0, p.dims_size()};
  }
  std::vector<ninf_argvalue> values(static_cast<std::size_t>(n));
  char err[512] = "";
  if (binding->collect(binding->ctx, n, params.data(), values.data(), err, sizeof err) != 0)
    return Status(NINF_ERR_ARGUMENT_MISMATCH, err[0] ? err : "the binding refused the arguments");
  NINF_RETURN_IF_ERROR(list->Build(iface, std::move(values)));
  if (!binding->verify && !binding->verify_shape) return Status::Ok();
  for (int i = 0; i < n; ++i) {
    if (!IsArray(iface->params(i))) continue;
    err[0] = '\0';
    const unsigned long long elements = list->layout().params[i].elements;
    int rc = 0;
    if (binding->verify_shape) {
      const std::vector<unsigned long long> extents = list->Extents(i);
      rc = binding->verify_shape(binding->ctx, i, elements, static_cast<int>(extents.size()),
                                 extents.data(), err, sizeof err);
    } else {
      rc = binding->verify(binding->ctx, i, elements, err, sizeof err);
    }
    if (rc != 0)
      return Status(NINF_ERR_ARGUMENT_MISMATCH,
                    err[0] ? err : "argument '" + iface->params(i).name() + "' is too small");
  }
  return Status::Ok();
}

}  // namespace ninf::client

extern "C" {

int Ninf_call_binding(const char *name, const ninf_binding_args *args) {
  return ninf::client::GuardNinf([&]() -> int {
    auto call = std::make_unique<ninf::client::RemoteCall>();
    ninf::Status st = call->PrepareBinding(name, args);
    if (st.ok() && ninf::client::InTransaction())
      st = ninf::client::RecordCall(std::move(call));
    else if (st.ok())
      st = call->Execute();
    return ninf::client::RecordStatus(st);
  });
}

int Ninf_call_async_binding(const char *name, const ninf_binding_args *args) {
  return ninf::client::GuardNinf([&]() -> int {
    if (ninf::client::InTransaction())
      return ninf::client::RecordStatus(ninf::client::AsyncInTransaction());
    auto call = std::make_shared<ninf::client::RemoteCall>();
    ninf::Status st = call->PrepareBinding(name, args);
    if (!st.ok()) return ninf::client::RecordStatus(st);
    ninf::client::RecordStatus(ninf::Status());
    return ninf::client::Sessions::Instance().Start([call] { return call->Execute(); },
                                                    [call] { call->Cancel(); });
  });
}

void Ninf_binding_set_interrupt(int (*check)(void)) { ninf::SetInterruptCheck(check); }

void Ninf_binding_set_server_advice(const char *text) {
  ninf::client::SetHowToChooseServer(text ? text : "");
}

int Ninf_binding_set_server(const char *address, const char *origin) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!address || !*address)
      return ninf::client::RecordStatus(
          ninf::Status(NINF_ERR_INVALID_ARGUMENT, "no server address: pass \"host[:port]\""));
    ninf::client::ServerAddress addr;
    if (ninf::Status st = ninf::client::ParseServerAddress(address, &addr); !st.ok())
      return ninf::client::RecordStatus(st);
    ninf::client::SetDefaultServer(addr, ninf::client::ServerOrigin::kSetServer,
                                   origin ? origin : "");
    return ninf::client::RecordStatus(ninf::Status());
  });
}

}  // extern "C"
