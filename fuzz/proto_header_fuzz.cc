// Every protobuf message that arrives from the network (protocol/ninf.proto),
// parsed from arbitrary bytes; and what the receivers then do with an
// interface and the scalars of a call: ValidateInterface, Signature,
// DecodeScalar for each IN scalar, EvalExpr of CalcOrder and ComputeLayout,
// as the stub runtime (stubs/runtime/call_server.cc) and the client
// (client/interfaces.cc, client/arguments.cc) do.
//
// Input: byte 0 selects the message. For the call path (selector 0) the rest
// is [u16 LE interface length][FunctionInterface][u64 LE max_call_bytes][Args].
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "ninf.pb.h"
#include "protocol/layout.h"
#include "protocol/scalar_codec.h"
#include "protocol/status.h"

namespace {

using ninf::Status;
namespace wire = ninf::wire;

uint64_t GetLe(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

void CheckStatus(const Status &st) {
  FUZZ_CHECK(ninf::ErrorText(st.code()) != nullptr, st.message().c_str());
}

// Parses `bytes` as T; a message that parsed serializes into bytes that
// parse into an equal message.
template <typename T>
bool ParseMessage(const uint8_t *data, std::size_t size, T *out) {
  if (!out->ParseFromArray(data, static_cast<int>(size))) return false;
  std::string again;
  FUZZ_CHECK(out->SerializeToString(&again), "a parsed message does not serialize");
  T copy;
  FUZZ_CHECK(copy.ParseFromString(again), "a re-serialized message does not parse");
  std::string twice;
  FUZZ_CHECK(copy.SerializeToString(&twice) && twice == again, "serialization is not stable");
  return true;
}

// The executable's side of a call (CallServer::ServeCall) and the client's
// (it validates the interface ninfd sent, then computes the same layout).
void FuzzCall(const uint8_t *data, std::size_t size) {
  if (size < 2) return;
  std::size_t iface_len = GetLe(data, 2);
  data += 2;
  size -= 2;
  if (iface_len > size) iface_len = size;
  wire::FunctionInterface iface;
  if (!ParseMessage(data, iface_len, &iface)) return;
  data += iface_len;
  size -= iface_len;
  uint64_t max_call_bytes = 0;
  if (size >= 8) {
    max_call_bytes = GetLe(data, 8);
    data += 8;
    size -= 8;
  }
  Status st = ninf::ValidateInterface(iface);
  CheckStatus(st);
  (void)ninf::Signature(iface);
  if (!st.ok()) return;  // both sides refuse such an interface

  wire::Args args;
  if (!ParseMessage(data, size, &args)) return;
  const int nparams = iface.params_size();
  std::vector<ninf::ScalarSlot> slots(static_cast<std::size_t>(nparams));
  std::vector<int64_t> values(static_cast<std::size_t>(nparams), 0);
  int next = 0;
  for (int i = 0; i < nparams; ++i) {
    const wire::Param &p = iface.params(i);
    if (!ninf::IsInScalar(p)) continue;
    if (next >= args.scalars_size()) break;  // the executable refuses the call here
    st = ninf::DecodeScalar(p, args.scalars(next++), &slots[static_cast<std::size_t>(i)],
                            &values[static_cast<std::size_t>(i)]);
    CheckStatus(st);
    if (!st.ok()) return;
    if (slots[static_cast<std::size_t>(i)].is_string)
      FUZZ_CHECK(p.type() == wire::TYPE_STRING, "a non-string decoded as a string");
    (void)slots[static_cast<std::size_t>(i)].Pointer();
  }
  int64_t order = 0;
  if (iface.calc_order().nodes_size())
    CheckStatus(ninf::EvalExpr(iface, iface.calc_order(), values, &order));
  ninf::CallLayout layout;
  st = ninf::ComputeLayout(iface, values, max_call_bytes, &layout);
  CheckStatus(st);
  if (!st.ok()) return;
  FUZZ_CHECK(layout.params.size() == static_cast<std::size_t>(nparams), "layout size");
  FUZZ_CHECK(max_call_bytes == 0 || layout.total_bytes <= max_call_bytes, "limit ignored");
  FUZZ_CHECK(layout.send_bytes <= layout.total_bytes && layout.return_bytes <= layout.total_bytes,
             "send/return bytes over the total");
  for (int i = 0; i < nparams; ++i) {
    const ninf::ParamLayout &pl = layout.params[static_cast<std::size_t>(i)];
    const wire::Param &p = iface.params(i);
    if (!ninf::IsArray(p)) FUZZ_CHECK(pl.elements == 0 && pl.bytes == 0, "a scalar has bytes");
    if (ninf::IsArray(p))
      FUZZ_CHECK(pl.bytes == pl.elements * ninf::ElementSize(p.type()), "bytes != elements * size");
  }
}

// The reply path of the client: an Error frame's code becomes a Status
// (ErrorFromWire, as Channel::RecvReply does, clamps codes outside the list).
void FuzzError(const uint8_t *data, std::size_t size) {
  wire::Error err;
  if (!ParseMessage(data, size, &err)) return;
  Status st(ninf::ErrorFromWire(err.code()), err.message());
  CheckStatus(st);
  (void)st.ToString();
}

template <typename T>
void FuzzPlain(const uint8_t *data, std::size_t size) {
  T msg;
  (void)ParseMessage(data, size, &msg);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[0];
  ++data;
  --size;
  switch (selector % 14) {
    case 0:
      FuzzCall(data, size);
      break;
    case 1: {  // FRAME_INTERFACE, as the client checks it
      wire::InterfaceReply reply;
      if (ParseMessage(data, size, &reply)) CheckStatus(ninf::ValidateInterface(reply.iface()));
      break;
    }
    case 2:
      FuzzError(data, size);
      break;
    case 3:
      FuzzPlain<wire::QueryInterface>(data, size);
      break;
    case 4:
      FuzzPlain<wire::CallRequest>(data, size);
      break;
    case 5:
      FuzzPlain<wire::Args>(data, size);
      break;
    case 6:
      FuzzPlain<wire::Result>(data, size);
      break;
    case 7:
      FuzzPlain<wire::StatsRequest>(data, size);
      break;
    case 8:
      FuzzPlain<wire::StatsReply>(data, size);
      break;
    case 9:
      FuzzPlain<wire::ListRequest>(data, size);
      break;
    case 10:
      FuzzPlain<wire::ListReply>(data, size);
      break;
    case 11:
      FuzzPlain<wire::End>(data, size);
      break;
    case 12:
      FuzzPlain<wire::Heartbeat>(data, size);
      break;
    case 13:
      FuzzPlain<wire::FunctionInterface>(data, size);
      break;
  }
  return 0;
}
