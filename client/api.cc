// The public C API of ninf.h on top of RemoteCall and Sessions: argument
// validation at the edge, the per-thread last error, and the 0 / -1
// convention of the Ninf functions.
#include <cstdio>
#include <cstring>
#include <string>

#include "client/c_boundary.h"
#include "client/last_error.h"
#include "client/ninf.h"
#include "client/remote_call.h"
#include "client/sessions.h"
#include "client/transaction.h"

namespace {

using ninf::Status;
using ninf::client::RemoteCall;
using ninf::client::Sessions;

int Record(const Status &st) { return ninf::client::RecordStatus(st); }

// This thread's last Ninf_call (Ninf_get_call_info).
thread_local Ninf_call_info last_call_info{};
thread_local bool has_call_info = false;

Status PrepareCall(const char *name, va_list args, std::unique_ptr<RemoteCall> *out) {
  auto call = std::make_unique<RemoteCall>();
  va_list ap;
  va_copy(ap, args);
  Status st = call->Prepare(name, &ap);
  va_end(ap);
  if (st.ok()) *out = std::move(call);
  return st;
}

}  // namespace

extern "C" {

int Ninf_call_v(const char *name, va_list args) {
  return ninf::client::GuardNinf([&]() -> int {
    std::unique_ptr<RemoteCall> call;
    Status st = PrepareCall(name, args, &call);
    if (ninf::client::InTransaction())
      return Record(st.ok() ? ninf::client::RecordCall(std::move(call)) : st);
    if (st.ok()) {
      st = call->Execute();
      last_call_info = call->info();
    } else {  // it never reached a server
      last_call_info = Ninf_call_info{};
      last_call_info.error = st.code();
    }
    has_call_info = true;
    return Record(st);
  });
}

int Ninf_call(const char *name, ...) {
  va_list ap;
  va_start(ap, name);
  int r = Ninf_call_v(name, ap);
  va_end(ap);
  return r;
}

int Ninf_call_async_v(const char *name, va_list args) {
  return ninf::client::GuardNinf([&]() -> int {
    if (ninf::client::InTransaction()) return Record(ninf::client::AsyncInTransaction());
    std::unique_ptr<RemoteCall> call;
    Status st = PrepareCall(name, args, &call);
    if (!st.ok()) return Record(st);
    Record(Status::Ok());
    std::shared_ptr<RemoteCall> shared(std::move(call));
    return Sessions::Instance().Start([shared] { return shared->Execute(); },
                                      [shared] { shared->Cancel(); });
  });
}

int Ninf_call_async(const char *name, ...) {
  va_list ap;
  va_start(ap, name);
  int r = Ninf_call_async_v(name, ap);
  va_end(ap);
  return r;
}

int Ninf_wait(int id) {
  return ninf::client::GuardNinf([&]() -> int { return Record(Sessions::Instance().Wait(id)); });
}

int Ninf_wait_all(void) {
  return ninf::client::GuardNinf([&]() -> int {
    Status first_failure;
    for (int id : Sessions::Instance().Outstanding()) {
      Status st = Sessions::Instance().Wait(id);
      if (!st.ok() && first_failure.ok() && st.code() != NINF_ERR_INVALID_ID) first_failure = st;
    }
    return Record(first_failure);
  });
}

int Ninf_wait_any(int *id) {
  return ninf::client::GuardNinf([&]() -> int {
    int ignored;
    return Record(Sessions::Instance().WaitAny({}, id ? id : &ignored));
  });
}

int Ninf_set_server(const char *host, int port) {
  return ninf::client::GuardNinf([&]() -> int {
    ninf::client::ServerAddress addr;
    Status st = ninf::client::DefaultServer(&addr);
    if (!st.ok()) addr = {"localhost", ninf::client::kDefaultPort};
    if (host && *host) addr.host = host;
    if (port <= 0 || port > 65535)
      return Record(Status(NINF_ERR_INVALID_ARGUMENT, "bad port " + std::to_string(port)));
    addr.port = port;
    ninf::client::SetDefaultServer(addr, ninf::client::ServerOrigin::kSetServer);
    return Record(Status::Ok());
  });
}

int Ninf_parse_arg(int argc, char **argv) {
  return ninf::client::GuardNinf([&]() -> int {
    if (argc <= 0 || !argv) return argc;
    ninf::client::ServerAddress addr;
    if (!ninf::client::DefaultServer(&addr).ok()) addr = {"localhost", ninf::client::kDefaultPort};
    // Read every option before touching argv: a bad value leaves argv and the
    // default server as they were.
    bool changed = false;
    std::string given;  // "-server host -port 3001": what messages name as the origin
    for (int i = 1; i + 1 < argc; ++i) {
      const char *a = argv[i], *value = argv[i + 1];
      if (!std::strcmp(a, "-server") || !std::strcmp(a, "--server")) {
        ninf::client::ServerAddress parsed;
        Status st = ninf::client::ParseServerAddress(value, &parsed);
        if (!st.ok()) return Record(Status(st.code(), std::string(a) + " " + st.message()));
        addr.host = parsed.host;
        if (std::strchr(value, ':')) addr.port = parsed.port;
      } else if (!std::strcmp(a, "-port") || !std::strcmp(a, "--port")) {
        if (!ninf::ParsePort(value, &addr.port))
          return Record(Status(NINF_ERR_INVALID_ARGUMENT,
                               std::string(a) + " '" + value + "' is not a port (1 to 65535)"));
      } else {
        continue;
      }
      changed = true;
      given += (given.empty() ? "" : " ") + std::string(a) + " " + value;
      ++i;
    }
    int out = 1;
    for (int i = 1; i < argc; ++i) {
      const char *a = argv[i];
      bool option = !std::strcmp(a, "-server") || !std::strcmp(a, "--server") ||
                    !std::strcmp(a, "-port") || !std::strcmp(a, "--port");
      if (option && i + 1 < argc) {
        ++i;
        continue;
      }
      argv[out++] = argv[i];
    }
    if (out < argc) argv[out] = nullptr;
    if (changed)
      ninf::client::SetDefaultServer(addr, ninf::client::ServerOrigin::kCommandLine, given);
    return out;
  });
}

const char *Ninf_error_string(int code) {
  const char *text = ninf::ErrorText(code);
  if (text) return text;
  static thread_local char unknown[48];
  std::snprintf(unknown, sizeof unknown, "unknown error code %d", code);
  return unknown;
}

int Ninf_get_call_info(Ninf_call_info *info) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!info) return Record(Status(NINF_ERR_INVALID_ARGUMENT, "Ninf_get_call_info: info is NULL"));
    if (!has_call_info)
      return Record(Status(NINF_ERR_INVALID_ID, "this thread has made no Ninf_call yet"));
    *info = last_call_info;
    return Record(Status::Ok());
  });
}

int Ninf_estimate_v(Ninf_call_info *info, const char *name, va_list args) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!info) return Record(Status(NINF_ERR_INVALID_ARGUMENT, "Ninf_estimate: info is NULL"));
    RemoteCall call;
    va_list ap;
    va_copy(ap, args);
    Status st = call.Estimate(name, &ap, info);
    va_end(ap);
    return Record(st);
  });
}

int Ninf_estimate(Ninf_call_info *info, const char *name, ...) {
  va_list ap;
  va_start(ap, name);
  int r = Ninf_estimate_v(info, name, ap);
  va_end(ap);
  return r;
}

int Ninf_transaction_begin(void) {
  return ninf::client::GuardNinf([&]() -> int { return Record(ninf::client::BeginTransaction()); });
}

int Ninf_transaction_end(void) {
  return ninf::client::GuardNinf([&]() -> int { return Record(ninf::client::EndTransaction()); });
}

int Ninf_transaction_discard(const void *array) {
  return ninf::client::GuardNinf(
      [&]() -> int { return Record(ninf::client::DiscardInTransaction(array)); });
}

int Ninf_transaction_active(void) { return ninf::client::InTransaction() ? 1 : 0; }

int Ninf_transaction_calls(void) { return ninf::client::LastBlockCalls(); }

int Ninf_transaction_call_info(int index, Ninf_call_info *info) {
  return ninf::client::GuardNinf([&]() -> int {
    if (!info)
      return Record(Status(NINF_ERR_INVALID_ARGUMENT, "Ninf_transaction_call_info: info is NULL"));
    return Record(ninf::client::LastBlockCall(index, info, nullptr));
  });
}

const char *Ninf_transaction_call_detail(int index) {
  static thread_local std::string detail;
  try {
    detail.clear();
    if (!ninf::client::LastBlockCall(index, nullptr, &detail).ok()) detail.clear();
    return detail.c_str();
  } catch (...) {
    return "";
  }
}

int Ninf_get_error(void) { return ninf::client::LastErrorCode(); }

const char *Ninf_get_error_detail(void) { return ninf::client::LastErrorDetail().c_str(); }

void Ninf_perror(const char *msg) {
  const char *text = Ninf_error_string(Ninf_get_error());
  const std::string &detail = ninf::client::LastErrorDetail();
  if (msg && *msg) std::fprintf(stderr, "%s: ", msg);
  if (detail.empty())
    std::fprintf(stderr, "%s\n", text);
  else
    std::fprintf(stderr, "%s: %s\n", text, detail.c_str());
}

}  // extern "C"
