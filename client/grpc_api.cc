// The GridRPC end-user API (grpc.h) on FunctionHandle and Sessions.
#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <string>

#include "client/c_boundary.h"
#include "client/client_config.h"
#include "client/grpc.h"
#include "client/grpc_errors.h"
#include "client/handle.h"
#include "client/interfaces.h"
#include "client/metaserver.h"
#include "client/ninf_binding.h"
#include "client/sessions.h"

namespace {

using ninf::Status;
using ninf::client::ArgumentList;
using ninf::client::FunctionHandle;
using ninf::client::Sessions;

constexpr int kHandleMagic = 0x4e494e46;  // "NINF"

struct State {
  std::mutex mutex;
  bool initialized = false;
  ninf::client::ClientConfig config;
  std::deque<grpc_sessionid_t> failed;  // for grpc_get_failed_sessionid
};

State &S() {
  static State *s = new State();
  return *s;
}

bool Initialized() {
  std::lock_guard<std::mutex> lock(S().mutex);
  return S().initialized;
}

// handle->impl holds a shared_ptr: a session still running on a handle keeps
// the FunctionHandle alive after grpc_function_handle_destruct, which only
// drops the handle's own reference.
using HandlePtr = std::shared_ptr<FunctionHandle>;

HandlePtr Impl(grpc_function_handle_t *h) {
  if (!h || h->magic != kHandleMagic || !h->impl) return nullptr;
  return *static_cast<HandlePtr *>(h->impl);
}

void RecordFailed(grpc_sessionid_t id) {
  std::lock_guard<std::mutex> lock(S().mutex);
  S().failed.push_back(id);
}

// What a wait returns for a finished session. A cancelled session's wait
// says GRPC_SESSION_FAILED, as the reference implementation does;
// grpc_get_error keeps the cancel (GRPC_SESSION_CANCELLED). The set waits
// (`record`) remember failed sessions for grpc_get_failed_sessionid, which
// GFD.52 defines for them only.
grpc_error_t Finish(grpc_sessionid_t id, const Status &st, bool record) {
  grpc_error_t code = ninf::client::ToGrpcError(st, false);
  if (code == GRPC_SESSION_CANCELLED) code = GRPC_SESSION_FAILED;
  if (code != GRPC_NO_ERROR && record) RecordFailed(id);
  return code;
}

Status ResolveServer(const char *text, ninf::client::ServerAddress *out) {
  {
    std::lock_guard<std::mutex> lock(S().mutex);
    auto it = S().config.servers.find(text);
    if (it != S().config.servers.end()) {
      *out = it->second;
      return Status::Ok();
    }
  }
  return ninf::client::ParseServerAddress(text, out);
}

grpc_error_t InitHandle(grpc_function_handle_t *handle, const ninf::client::ServerAddress &server,
                        const char *func_name) {
  if (!handle || !func_name)
    return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "NULL handle or function name");
  auto impl = std::make_shared<FunctionHandle>();
  Status st = impl->Init(server, func_name);
  if (!st.ok()) {
    handle->impl = nullptr;
    handle->magic = 0;
    return ninf::client::RecordGrpc(ninf::client::ToGrpcError(st, true), st);
  }
  handle->impl = new HandlePtr(std::move(impl));
  handle->magic = kHandleMagic;
  return ninf::client::RecordGrpc(GRPC_NO_ERROR, "");
}

// grpc_function_handle_default with a metaserver: the handle is bound to the
// server it ranks first (its executable then serves every call of the
// handle), or to the next if that one cannot be reached. With the
// metaserver unreachable, to the first fallback server that answers.
grpc_error_t InitPlacedHandle(grpc_function_handle_t *handle,
                              const ninf::client::ServerAddress &meta, const char *func_name) {
  std::vector<ninf::client::ServerAddress> servers;
  ninf::wire::PlaceRequest request;
  request.set_function(func_name);
  request.set_limit(3);
  ninf::wire::Placement placement;
  Status st = ninf::client::MetaPlace(meta, request, &placement);
  if (st.ok()) {
    for (const ninf::wire::PlacementTarget &t : placement.targets()) {
      ninf::client::ServerAddress a;
      if (ninf::client::ParseServerAddress(t.address(), &a).ok()) servers.push_back(a);
    }
  } else if (ninf::client::MetaserverUnreachable(st)) {
    servers = ninf::client::FallbackServers();
  } else {
    return ninf::client::RecordGrpc(ninf::client::ToGrpcError(st, true), st);
  }
  grpc_error_t last = GRPC_SERVER_NOT_FOUND;
  for (const ninf::client::ServerAddress &server : servers)
    if ((last = InitHandle(handle, server, func_name)) == GRPC_NO_ERROR) break;
  return last;
}

// Prepares the argument list of a call on `handle` from varargs or a binding.
Status Prepare(const HandlePtr &impl, va_list *ap, const ninf_binding_args *binding,
               ArgumentList *list) {
  if (binding) return ninf::client::BuildFromBinding(impl->iface(), binding, list);
  return list->Build(impl->iface(), ninf::client::CollectVarargs(*impl->iface(), ap));
}

grpc_error_t CallSync(grpc_function_handle_t *handle, va_list *ap,
                      const ninf_binding_args *binding) {
  if (!Initialized())
    return ninf::client::RecordGrpc(GRPC_NOT_INITIALIZED, "call grpc_initialize first");
  HandlePtr impl = Impl(handle);
  if (!impl)
    return ninf::client::RecordGrpc(GRPC_INVALID_FUNCTION_HANDLE, "handle not initialized");
  ArgumentList list;
  Status st = Prepare(impl, ap, binding, &list);
  if (st.ok()) st = impl->Call(list);
  return ninf::client::RecordGrpc(ninf::client::ToGrpcError(st, false), st);
}

grpc_error_t CallAsync(grpc_function_handle_t *handle, grpc_sessionid_t *id, va_list *ap,
                       const ninf_binding_args *binding) {
  if (id) *id = GRPC_SESSIONID_VOID;
  if (!Initialized())
    return ninf::client::RecordGrpc(GRPC_NOT_INITIALIZED, "call grpc_initialize first");
  HandlePtr impl = Impl(handle);
  if (!impl)
    return ninf::client::RecordGrpc(GRPC_INVALID_FUNCTION_HANDLE, "handle not initialized");
  if (!id) return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "NULL session id pointer");
  auto list = std::make_shared<ArgumentList>();
  Status st = Prepare(impl, ap, binding, list.get());
  if (!st.ok()) return ninf::client::RecordGrpc(ninf::client::ToGrpcError(st, false), st);
  auto token = std::make_shared<ninf::client::CancelToken>();
  *id = Sessions::Instance().Start([impl, list, token] { return impl->Call(*list, token.get()); },
                                   [token] { token->Cancel(); }, handle);
  return ninf::client::RecordGrpc(GRPC_NO_ERROR, "");
}

grpc_error_t CheckInit() {
  return Initialized()
             ? GRPC_NO_ERROR
             : ninf::client::RecordGrpc(GRPC_NOT_INITIALIZED, "call grpc_initialize first");
}

}  // namespace

extern "C" {

grpc_error_t grpc_initialize(char *config_file_name) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    ninf::client::ClientConfig config;
    if (config_file_name) {
      Status st = ninf::client::LoadClientConfig(config_file_name, &config);
      if (!st.ok())
        return ninf::client::RecordGrpc(st.code() == NINF_ERR_INVALID_ARGUMENT
                                            ? GRPC_CONFIGFILE_NOT_FOUND
                                            : GRPC_CONFIGFILE_ERROR,
                                        st);
    } else if (Status st = ninf::client::CheckedOptions(&config.options); !st.ok()) {
      return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, st);  // names the variable
    }
    {
      std::lock_guard<std::mutex> lock(S().mutex);
      if (S().initialized) return ninf::client::RecordGrpc(GRPC_ALREADY_INITIALIZED, "");
      S().initialized = true;
      S().config = config;
      S().failed.clear();
    }
    if (config_file_name) {
      ninf::client::SetOptions(config.options);
      if (config.has_default_server)
        ninf::client::SetDefaultServer(config.default_server,
                                       ninf::client::ServerOrigin::kConfigFile, config_file_name);
      if (config.has_metaserver) ninf::client::SetMetaserver(config.metaserver);
      std::vector<ninf::client::ServerAddress> fallback;
      for (const auto &[alias, address] : config.servers) fallback.push_back(address);
      ninf::client::SetFallbackServers(std::move(fallback));
    }
    return ninf::client::RecordGrpc(GRPC_NO_ERROR, "");
  });
}

grpc_error_t grpc_finalize(void) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    Sessions::Instance().CancelAll();
    for (int id : Sessions::Instance().Outstanding()) (void)Sessions::Instance().Wait(id);
    Sessions::Instance().Reset();
    std::lock_guard<std::mutex> lock(S().mutex);
    S().initialized = false;
    S().failed.clear();
    return ninf::client::RecordGrpc(GRPC_NO_ERROR, "");
  });
}

grpc_error_t grpc_function_handle_default(grpc_function_handle_t *handle, char *func_name) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    ninf::client::ServerAddress meta;
    Status config;
    if (ninf::client::ConfiguredMetaserver(&meta, &config) && func_name)
      return InitPlacedHandle(handle, meta, func_name);
    if (!config.ok()) return ninf::client::RecordGrpc(GRPC_CONFIGFILE_ERROR, config);
    ninf::client::ServerAddress server;
    Status st = ninf::client::DefaultServer(&server);
    if (!st.ok()) return ninf::client::RecordGrpc(GRPC_SERVER_NOT_FOUND, st);
    return InitHandle(handle, server, func_name);
  });
}

grpc_error_t grpc_function_handle_init(grpc_function_handle_t *handle, char *host_port_str,
                                       char *func_name) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (!host_port_str) return ninf::client::RecordGrpc(GRPC_SERVER_NOT_FOUND, "NULL server name");
    ninf::client::ServerAddress server;
    Status st = ResolveServer(host_port_str, &server);
    if (!st.ok()) return ninf::client::RecordGrpc(GRPC_SERVER_NOT_FOUND, st);
    return InitHandle(handle, server, func_name);
  });
}

grpc_error_t grpc_function_handle_destruct(grpc_function_handle_t *handle) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (!Impl(handle))
      return ninf::client::RecordGrpc(GRPC_INVALID_FUNCTION_HANDLE, "handle not initialized");
    // The FunctionHandle ends (FRAME_END stops the executable) with its last
    // reference: now, or when the last session still running on it ends.
    delete static_cast<HandlePtr *>(handle->impl);
    handle->impl = nullptr;
    handle->magic = 0;
    return ninf::client::RecordGrpc(GRPC_NO_ERROR, "");
  });
}

grpc_error_t grpc_get_handle(grpc_function_handle_t **handle, grpc_sessionid_t session_id) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    void *tag = Sessions::Instance().Tag(session_id);
    if (!tag || !handle)
      return ninf::client::RecordGrpc(GRPC_INVALID_SESSION_ID, "no such session");
    *handle = static_cast<grpc_function_handle_t *>(tag);
    return ninf::client::RecordGrpc(GRPC_NO_ERROR, "");
  });
}

grpc_error_t grpc_call(grpc_function_handle_t *handle, ...) {
  va_list ap;
  va_start(ap, handle);
  grpc_error_t e = ninf::client::GuardGrpc([&] { return CallSync(handle, &ap, nullptr); });
  va_end(ap);
  return e;
}

grpc_error_t grpc_call_async(grpc_function_handle_t *handle, grpc_sessionid_t *session_id, ...) {
  va_list ap;
  va_start(ap, session_id);
  grpc_error_t e =
      ninf::client::GuardGrpc([&] { return CallAsync(handle, session_id, &ap, nullptr); });
  va_end(ap);
  return e;
}

grpc_error_t grpc_call_binding(grpc_function_handle_t *handle, const ninf_binding_args *args) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t { return CallSync(handle, nullptr, args); });
}

grpc_error_t grpc_call_async_binding(grpc_function_handle_t *handle, grpc_sessionid_t *session_id,
                                     const ninf_binding_args *args) {
  return ninf::client::GuardGrpc(
      [&]() -> grpc_error_t { return CallAsync(handle, session_id, nullptr, args); });
}

grpc_error_t grpc_probe(grpc_sessionid_t session_id) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    bool done = false;
    if (!Sessions::Instance().Probe(session_id, &done).ok())
      return ninf::client::RecordGrpc(GRPC_INVALID_SESSION_ID, "no such session");
    return done ? GRPC_NO_ERROR : GRPC_NOT_COMPLETED;
  });
}

grpc_error_t grpc_probe_or(grpc_sessionid_t *id_array, size_t length, grpc_sessionid_t *id_ptr) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (id_ptr) *id_ptr = GRPC_SESSIONID_VOID;
    if (!id_array || !id_ptr)
      return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "NULL argument");
    bool any_valid = false;
    for (size_t i = 0; i < length; ++i) {
      bool done = false;
      if (!Sessions::Instance().Probe(id_array[i], &done).ok()) continue;
      any_valid = true;
      if (done) {
        *id_ptr = id_array[i];
        return GRPC_NO_ERROR;
      }
    }
    if (!any_valid && length > 0)
      return ninf::client::RecordGrpc(GRPC_INVALID_SESSION_ID, "no such sessions");
    return GRPC_NONE_COMPLETED;
  });
}

grpc_error_t grpc_cancel(grpc_sessionid_t session_id) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (!Sessions::Instance().Cancel(session_id).ok())
      return ninf::client::RecordGrpc(GRPC_INVALID_SESSION_ID, "no such session");
    return GRPC_NO_ERROR;
  });
}

grpc_error_t grpc_cancel_all(void) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    Sessions::Instance().CancelAll();
    return GRPC_NO_ERROR;
  });
}

grpc_error_t grpc_wait(grpc_sessionid_t session_id) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    Status st = Sessions::Instance().Wait(session_id);
    if (st.code() == NINF_ERR_INVALID_ID)
      return ninf::client::RecordGrpc(GRPC_INVALID_SESSION_ID, st);
    return ninf::client::RecordGrpc(Finish(session_id, st, false), st);
  });
}

grpc_error_t grpc_wait_and(grpc_sessionid_t *id_array, size_t length) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (!id_array && length)
      return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "NULL id array");
    grpc_error_t result = GRPC_NO_ERROR;
    for (size_t i = 0; i < length; ++i) {
      Status st = Sessions::Instance().Wait(id_array[i]);
      grpc_error_t code = st.code() == NINF_ERR_INVALID_ID ? GRPC_INVALID_SESSION_ID
                                                           : Finish(id_array[i], st, true);
      if (code != GRPC_NO_ERROR && result == GRPC_NO_ERROR)
        result = code == GRPC_INVALID_SESSION_ID ? code : GRPC_SESSION_FAILED;
    }
    return ninf::client::RecordGrpc(result, "");
  });
}

grpc_error_t grpc_wait_or(grpc_sessionid_t *id_array, size_t length, grpc_sessionid_t *id_ptr) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (id_ptr) *id_ptr = GRPC_SESSIONID_VOID;
    if (!id_array || !id_ptr || length == 0)
      return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "empty id array");
    std::vector<int> ids(id_array, id_array + length);
    int found = -1;
    Status st = Sessions::Instance().WaitAny(ids, &found);
    if (found < 0) return ninf::client::RecordGrpc(GRPC_INVALID_SESSION_ID, st);
    *id_ptr = found;
    return ninf::client::RecordGrpc(Finish(found, st, true), st);
  });
}

grpc_error_t grpc_wait_all(void) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    grpc_error_t result = GRPC_NO_ERROR;
    for (int id : Sessions::Instance().Outstanding()) {
      Status st = Sessions::Instance().Wait(id);
      if (st.code() == NINF_ERR_INVALID_ID) continue;  // collected by another thread meanwhile
      if (Finish(id, st, true) != GRPC_NO_ERROR) result = GRPC_SESSION_FAILED;
    }
    return ninf::client::RecordGrpc(result, "");
  });
}

grpc_error_t grpc_wait_any(grpc_sessionid_t *id_ptr) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (!id_ptr) return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "NULL id pointer");
    int found = -1;
    Status st = Sessions::Instance().WaitAny({}, &found);
    *id_ptr = found < 0 ? GRPC_SESSIONID_VOID : found;
    if (found < 0) return ninf::client::RecordGrpc(GRPC_NO_ERROR, "no outstanding sessions");
    return ninf::client::RecordGrpc(Finish(found, st, true), st);
  });
}

char *grpc_error_string(grpc_error_t error_code) {
  return const_cast<char *>(ninf::client::GrpcErrorText(error_code));
}

grpc_error_t grpc_get_error(grpc_sessionid_t session_id) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    Status st;
    switch (Sessions::Instance().Result(session_id, &st)) {
      case Sessions::State::kUnknown:
        return GRPC_INVALID_SESSION_ID;
      // The reference implementation (Ninf-G) says GRPC_NO_ERROR while the
      // session runs: no error has happened yet; grpc_probe tells completion.
      case Sessions::State::kRunning:
        return GRPC_NO_ERROR;
      case Sessions::State::kFinished:
        return ninf::client::ToGrpcError(st, false);
    }
    return GRPC_OTHER_ERROR_CODE;
  });
}

grpc_error_t grpc_get_failed_sessionid(grpc_sessionid_t *id_ptr) {
  return ninf::client::GuardGrpc([&]() -> grpc_error_t {
    if (grpc_error_t e = CheckInit()) return e;
    if (!id_ptr) return ninf::client::RecordGrpc(GRPC_OTHER_ERROR_CODE, "NULL id pointer");
    std::lock_guard<std::mutex> lock(S().mutex);
    if (S().failed.empty()) {
      *id_ptr = GRPC_SESSIONID_VOID;
    } else {
      *id_ptr = S().failed.front();
      S().failed.pop_front();
    }
    return GRPC_NO_ERROR;
  });
}

}  // extern "C"
