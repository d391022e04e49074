// grpc_server.cc - the gRPC peer's server: the callback API (gRPC's
// recommended C++ server API since 1.39), handlers that finish at once.
//
//     grpc_server --listen ADDRESS:PORT --ready-file FILE
//
// PORT 0 picks a free one; the port bound is written to FILE. Messages of
// any size are accepted (gRPC's default receive limit is 4 MiB). Echo and
// Dgesv take their messages from pools (grpc_message_pool.h), gRPC's
// mechanism for reusing message buffers across RPCs.
#include <grpcpp/grpcpp.h>
#include <lapacke.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "bench/peers/grpc_message_pool.h"
#include "peers.grpc.pb.h"

namespace {

class PeersService final : public ninfbench::Peers::CallbackService {
  grpc::ServerUnaryReactor* Null(grpc::CallbackServerContext* context,
                                 const ninfbench::NullRequest*, ninfbench::NullReply*) override {
    return Done(context);
  }

  grpc::ServerUnaryReactor* Echo(grpc::CallbackServerContext* context,
                                 const ninfbench::EchoMessage* request,
                                 ninfbench::EchoMessage* reply) override {
    *reply->mutable_data() = request->data();
    return Done(context);
  }

  // A is copied into a per-thread buffer that is reused across calls (the
  // request is const and LAPACK overwrites A); x is solved in place in the
  // reply's own bytes.
  grpc::ServerUnaryReactor* Dgesv(grpc::CallbackServerContext* context,
                                  const ninfbench::DgesvRequest* request,
                                  ninfbench::DgesvReply* reply) override {
    const size_t n = request->n() > 0 ? static_cast<size_t>(request->n()) : 0;
    if (n == 0 || request->a().size() != n * n * sizeof(double) ||
        request->b().size() != n * sizeof(double)) {
      auto* reactor = context->DefaultReactor();
      reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad sizes"));
      return reactor;
    }
    thread_local std::vector<double> a;
    thread_local std::vector<lapack_int> ipiv;
    thread_local std::vector<double> x;
    a.resize(n * n);
    ipiv.resize(n);
    x.resize(n);
    std::memcpy(a.data(), request->a().data(), n * n * sizeof(double));
    std::memcpy(x.data(), request->b().data(), n * sizeof(double));
    int nn = static_cast<int>(n);
    reply->set_info(
        LAPACKE_dgesv(LAPACK_COL_MAJOR, nn, 1, a.data(), nn, ipiv.data(), x.data(), nn));
    reply->set_x(x.data(), n * sizeof(double));
    return Done(context);
  }

  static grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* context) {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 || std::strcmp(argv[1], "--listen") != 0 ||
      std::strcmp(argv[3], "--ready-file") != 0) {
    std::fprintf(stderr, "usage: %s --listen ADDRESS:PORT --ready-file FILE\n", argv[0]);
    return 2;
  }
  PeersService service;
  MessagePool<ninfbench::EchoMessage, ninfbench::EchoMessage> echo_pool;
  MessagePool<ninfbench::DgesvRequest, ninfbench::DgesvReply> dgesv_pool;
  service.SetMessageAllocatorFor_Echo(&echo_pool);
  service.SetMessageAllocatorFor_Dgesv(&dgesv_pool);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(argv[2], grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(INT_MAX);
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "grpc_server: cannot listen on %s\n", argv[2]);
    return 1;
  }
  std::ofstream(argv[4]) << port << "\n";
  server->Wait();
  return 0;
}
