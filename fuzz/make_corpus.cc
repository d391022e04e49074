// Writes the binary seed inputs of fuzz/corpus with the project's own
// encoders, so that every seed is a real frame, request or interface:
//
//   make_corpus SOURCE_ROOT OUT_DIR
//
// reads the standard library's IDL (stubs/idl) and config/ninfd.toml under
// SOURCE_ROOT and writes OUT_DIR/<target>/<name> for frame_fuzz,
// request_reader_fuzz, proto_header_fuzz, settings_fuzz and meta_request_fuzz. The text seeds
// of idl_fuzz and dim_expr_fuzz are plain files kept in the tree.
#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "idl/diagnostics.h"
#include "idl/driver.h"
#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/layout.h"

namespace {

namespace fs = std::filesystem;
namespace wire = ninf::wire;

fs::path out_root;

void Write(const std::string &target, const std::string &name, const std::string &bytes) {
  fs::create_directories(out_root / target);
  std::ofstream(out_root / target / name, std::ios::binary | std::ios::trunc) << bytes;
}

std::string ReadFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Frame(ninf::FrameType type, const google::protobuf::MessageLite *msg,
                  const std::string &payload = "") {
  std::string header = msg ? msg->SerializeAsString() : "";
  ninf::FrameHeader h;
  h.type = type;
  h.header_length = static_cast<uint32_t>(header.size());
  h.payload_length = payload.size();
  uint8_t fixed[ninf::kFrameHeaderSize];
  ninf::EncodeFrameHeader(h, fixed);
  return std::string(reinterpret_cast<char *>(fixed), sizeof fixed) + header + payload;
}

std::string Le(uint64_t v, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>(v >> (8 * i));
  return out;
}

std::string Byte(int b) { return std::string(1, static_cast<char>(b)); }

// The arguments of a plausible call: small sizes, real numbers, a string.
wire::Args ArgsFor(const wire::FunctionInterface &iface) {
  wire::Args args;
  for (const wire::Param &p : iface.params()) {
    if (!ninf::IsInScalar(p)) continue;
    wire::Value *v = args.add_scalars();
    const ninf_type_info *info = ninf_type_info_of(p.type());
    if (!info) continue;
    switch (info->cls) {
      case NINF_CLASS_INTEGER:
        v->set_i(4);
        break;
      case NINF_CLASS_REAL:
        v->set_d(1.5);
        break;
      case NINF_CLASS_COMPLEX:
        v->mutable_c()->set_re(1);
        v->mutable_c()->set_im(-1);
        break;
      case NINF_CLASS_STRING:
        v->set_s("text");
        break;
    }
  }
  return args;
}

std::vector<wire::FunctionInterface> StdlibInterfaces(const fs::path &root) {
  std::vector<wire::FunctionInterface> out;
  for (const char *file : {"lapack.idl", "blas.idl", "ep.idl", "bench.idl"}) {
    fs::path path = root / "stubs" / "idl" / file;
    ninf::idl::Diagnostics diag;
    ninf::idl::Compilation comp;
    if (!ninf::idl::CompileText(ReadFile(path), path.string(), "", &diag, &comp)) {
      std::cerr << diag.Format();
      continue;
    }
    for (const ninf::idl::Output &o : comp.outputs) out.push_back(o.iface);
  }
  return out;
}

void FrameSeeds(const wire::FunctionInterface &dgesv) {
  // Byte 0 picks the reply the receiver waits for: 1 + byte % 12.
  wire::InterfaceReply reply;
  *reply.mutable_iface() = dgesv;
  wire::Error err;
  err.set_code(NINF_ERR_FUNCTION_NOT_FOUND);
  err.set_message("no function 'dgesvx' on this server");
  wire::Error odd;
  odd.set_code(9999);
  odd.set_message("a code outside the list");
  wire::StatsReply stats;
  stats.set_text("running:1\nqueued:0\n");
  wire::ListReply list;
  list.add_names("dgesv");
  list.add_names("dmmul");
  wire::Heartbeat beat;
  wire::Result result;
  Write("frame_fuzz", "interface_reply", Byte(1) + Frame(ninf::FRAME_INTERFACE, &reply));
  Write("frame_fuzz", "heartbeat_then_interface",
        Byte(1) + Frame(ninf::FRAME_HEARTBEAT, &beat) + Frame(ninf::FRAME_INTERFACE, &reply));
  Write("frame_fuzz", "error_reply", Byte(1) + Frame(ninf::FRAME_ERROR, &err));
  Write("frame_fuzz", "error_unknown_code", Byte(4) + Frame(ninf::FRAME_ERROR, &odd));
  Write("frame_fuzz", "result_with_payload",
        Byte(4 | 0x80) + Frame(ninf::FRAME_RESULT, &result, std::string(16, '\x3f')));
  Write("frame_fuzz", "stats_reply", Byte(7) + Frame(ninf::FRAME_STATS_REPLY, &stats));
  Write("frame_fuzz", "list_reply", Byte(9) + Frame(ninf::FRAME_LIST_REPLY, &list));
}

void RequestSeeds() {
  // Byte 0: how the stream is cut into reads (0 whole, 1 bytewise, else mixed).
  wire::QueryInterface query;
  query.set_name("dgesv");
  wire::CallRequest call;
  call.set_name("dgesv");
  call.set_call_id(7);
  call.set_persistent(true);
  call.set_heartbeat_ms(500);
  wire::Args args;
  args.add_scalars()->set_i(4);
  wire::StatsRequest stats;
  wire::ListRequest list;
  Write("request_reader_fuzz", "query", Byte(0) + Frame(ninf::FRAME_QUERY_INTERFACE, &query));
  Write("request_reader_fuzz", "list_stats_bytewise",
        Byte(1) + Frame(ninf::FRAME_LIST, &list) + Frame(ninf::FRAME_STATS, &stats));
  Write("request_reader_fuzz", "call_then_args",
        Byte(2) + Frame(ninf::FRAME_CALL, &call) + Frame(ninf::FRAME_ARGS, &args, "12345678"));
  Write("request_reader_fuzz", "query_empty_then_call",
        Byte(3) + Frame(ninf::FRAME_QUERY_INTERFACE, nullptr) + Frame(ninf::FRAME_CALL, &call));
}

void ProtoSeeds(const std::vector<wire::FunctionInterface> &ifaces) {
  // Byte 0 selects the message (proto_header_fuzz.cc); 0 is the call path.
  for (const wire::FunctionInterface &iface : ifaces) {
    std::string bytes = iface.SerializeAsString();
    Write("proto_header_fuzz", "call_" + iface.name(),
          Byte(0) + Le(bytes.size(), 2) + bytes + Le(uint64_t{1} << 30, 8) +
              ArgsFor(iface).SerializeAsString());
  }
  wire::InterfaceReply reply;
  *reply.mutable_iface() = ifaces.at(0);
  wire::Error err;
  err.set_code(NINF_ERR_SHUTTING_DOWN);
  err.set_message("server is shutting down");
  wire::CallRequest call;
  call.set_name("ep");
  call.set_call_id(1);
  call.set_heartbeat_ms(1000);
  Write("proto_header_fuzz", "interface_reply", Byte(1) + reply.SerializeAsString());
  Write("proto_header_fuzz", "error", Byte(2) + err.SerializeAsString());
  Write("proto_header_fuzz", "call_request", Byte(4) + call.SerializeAsString());
  Write("proto_header_fuzz", "args", Byte(5) + ArgsFor(ifaces.at(0)).SerializeAsString());
}

void SettingsSeeds(const fs::path &root) {
  // Byte 0: 0 a value for every setting, 1 a TOML file, 2 a command line,
  // 3 a host:port.
  Write("settings_fuzz", "value_bytes", Byte(0) + "512MiB");
  Write("settings_fuzz", "value_integer", Byte(0) + "3000");
  Write("settings_fuzz", "value_level", Byte(0) + "debug");
  Write("settings_fuzz", "toml_example", Byte(1) + ReadFile(root / "config" / "ninfd.toml"));
  Write("settings_fuzz", "toml_limits",
        Byte(1) +
            "slots = 2\nmax_call_bytes = \"1G\"\n[limits.dgesv]\nwall_seconds = 60\n"
            "cpu_seconds = 30\n");
  Write("settings_fuzz", "argv", Byte(2) + "--port\n0\n--slots\n4\n--log-level\nwarn");
  Write("settings_fuzz", "argv_status", Byte(2) + "--status\n--server\n[::1]:3000");
  Write("settings_fuzz", "host_port", Byte(3) + "example.org:4000");
}

// meta_request_fuzz: byte 0 picks the peer (bit 0) and the cutting (bits
// 1-2); the rest is a client's or a server's stream of requests.
void MetaSeeds(const wire::FunctionInterface &iface) {
  wire::ServerRegistration reg;
  reg.set_server_id("s1");
  reg.set_address("127.0.0.1:3000");
  reg.set_site("east");
  reg.set_cores(4);
  reg.set_slots(2);
  reg.set_flops_per_second(1e9);
  reg.set_lease_ms(5000);
  *reg.add_functions() = iface;
  wire::LoadReport load;
  load.set_server_id("s1");
  load.set_running(1);
  load.set_queued(2);
  load.set_work_seconds(3.5);
  load.set_calls_admitted(7);
  wire::FunctionLoad *f = load.add_functions();
  f->set_name(iface.name());
  f->set_calls(3);
  f->set_mean_seconds(0.25);
  f->set_flops_per_second(2e9);
  wire::PlaceRequest place;
  place.set_function(iface.name());
  place.set_site("east");
  place.set_in_bytes(1 << 20);
  place.set_limit(2);
  wire::PlaceRequest breakdown = place;
  breakdown.set_breakdown(true);
  breakdown.set_no_probe(true);
  wire::ProbeOutcome probed;
  probed.set_site("east");
  probed.set_server_id("s1");
  probed.set_small_bytes(1024);
  probed.set_small_seconds(0.001);
  probed.set_large_bytes(1 << 20);
  probed.set_large_seconds(0.011);
  wire::CallOutcome outcome;
  outcome.set_ticket(1);
  outcome.set_server_id("s1");
  outcome.set_site("east");
  outcome.set_out_bytes(1 << 20);
  outcome.set_out_seconds(0.01);
  wire::QueryInterface query;
  query.set_name(iface.name());
  wire::StatsRequest links;
  links.set_view("links");
  wire::StatsRequest servers;
  servers.set_view("servers");
  wire::ListRequest list;
  const std::string server =
      Frame(ninf::FRAME_META_REGISTER, &reg) + Frame(ninf::FRAME_META_LOAD, &load);
  const std::string client = Frame(ninf::FRAME_META_PROBED, &probed) +
                             Frame(ninf::FRAME_META_PLACE, &place) +
                             Frame(ninf::FRAME_META_OUTCOME, &outcome);
  Write("meta_request_fuzz", "server_register_load", Byte(0) + server);
  Write("meta_request_fuzz", "server_then_client", Byte(0) + server + client);
  Write("meta_request_fuzz", "server_then_client_bytewise", Byte(2) + server + client);
  Write("meta_request_fuzz", "client_other_host", Byte(5) + client);
  Write("meta_request_fuzz", "queries",
        Byte(4) + server + Frame(ninf::FRAME_QUERY_INTERFACE, &query) +
            Frame(ninf::FRAME_LIST, &list) + Frame(ninf::FRAME_STATS, &links) +
            Frame(ninf::FRAME_STATS, &servers) + Frame(ninf::FRAME_META_PLACE, &breakdown));
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SOURCE_ROOT OUT_DIR\n", argv[0]);
    return 2;
  }
  fs::path root = argv[1];
  out_root = argv[2];
  std::vector<wire::FunctionInterface> ifaces = StdlibInterfaces(root);
  if (ifaces.empty()) {
    std::fprintf(stderr, "make_corpus: no interface compiled from %s/stubs/idl\n", argv[1]);
    return 1;
  }
  FrameSeeds(ifaces.at(0));
  RequestSeeds();
  ProtoSeeds(ifaces);
  SettingsSeeds(root);
  MetaSeeds(ifaces.at(0));
  return 0;
}
