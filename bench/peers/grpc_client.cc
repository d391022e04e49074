// grpc_client.cc - the gRPC peer's client: a blocking stub on one channel
// (peer_bench.h has the command line and output).
//
//     grpc_client --connect ADDRESS:PORT --workload W ...
//
// Request and reply messages live as long as the client and are reused by
// every call, so their bytes fields keep their capacity (gRPC's and
// protobuf's advice for repeated calls). Results are copied out of the
// reply into the caller's arrays.
#include <grpcpp/grpcpp.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>

#include "bench/peers/peer_bench.h"
#include "peers.grpc.pb.h"

namespace {

struct GrpcPeer {
  std::unique_ptr<ninfbench::Peers::Stub> stub;
  ninfbench::EchoMessage echo_request, echo_reply;
  ninfbench::DgesvRequest dgesv_request;
  ninfbench::DgesvReply dgesv_reply;
};

GrpcPeer* Peer(void* ctx) { return static_cast<GrpcPeer*>(ctx); }

int Check(const grpc::Status& status, const char* what) {
  if (status.ok()) return 0;
  std::fprintf(stderr, "grpc_client: %s: %s\n", what, status.error_message().c_str());
  return -1;
}

int Connect(void* ctx, const char* address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(INT_MAX);
  args.SetMaxSendMessageSize(INT_MAX);
  auto channel = grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  Peer(ctx)->stub = ninfbench::Peers::NewStub(channel);
  return 0;
}

int NullCall(void* ctx) {
  grpc::ClientContext context;
  ninfbench::NullRequest request;
  ninfbench::NullReply reply;
  return Check(Peer(ctx)->stub->Null(&context, request, &reply), "Null");
}

int Echo(void* ctx, void* buf, size_t size) {
  GrpcPeer* p = Peer(ctx);
  grpc::ClientContext context;
  p->echo_request.mutable_data()->assign(static_cast<const char*>(buf), size);
  if (Check(p->stub->Echo(&context, p->echo_request, &p->echo_reply), "Echo") != 0) return -1;
  if (p->echo_reply.data().size() != size) return -1;
  std::memcpy(buf, p->echo_reply.data().data(), size);
  return 0;
}

int Dgesv(void* ctx, int n, const double* a, double* b) {
  GrpcPeer* p = Peer(ctx);
  grpc::ClientContext context;
  const size_t nn = static_cast<size_t>(n);
  p->dgesv_request.set_n(n);
  p->dgesv_request.mutable_a()->assign(reinterpret_cast<const char*>(a), nn * nn * sizeof(double));
  p->dgesv_request.mutable_b()->assign(reinterpret_cast<const char*>(b), nn * sizeof(double));
  if (Check(p->stub->Dgesv(&context, p->dgesv_request, &p->dgesv_reply), "Dgesv") != 0) return -1;
  if (p->dgesv_reply.info() != 0 || p->dgesv_reply.x().size() != nn * sizeof(double)) return -1;
  std::memcpy(b, p->dgesv_reply.x().data(), nn * sizeof(double));
  return 0;
}

void Close(void* ctx) { Peer(ctx)->stub.reset(); }

}  // namespace

int main(int argc, char** argv) {
  static GrpcPeer peer;
  PeerOps ops = {"grpc", &peer, Connect, NullCall, Echo, Dgesv, Close};
  return peer_main(argc, argv, &ops);
}
