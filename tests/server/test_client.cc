#include "tests/server/test_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

#ifndef FAKE_EXECUTABLE_PATH
#define FAKE_EXECUTABLE_PATH "fake_executable"
#endif

namespace ninf::test {

std::string FrameBytes(FrameType type, const google::protobuf::MessageLite *msg,
                       const std::string &payload) {
  std::string body = msg ? msg->SerializeAsString() : "";
  FrameHeader h;
  h.type = type;
  h.header_length = static_cast<uint32_t>(body.size());
  h.payload_length = payload.size();
  uint8_t fixed[kFrameHeaderSize];
  EncodeFrameHeader(h, fixed);
  return std::string(reinterpret_cast<const char *>(fixed), sizeof fixed) + body + payload;
}

void WriteAll(int fd, const std::string &bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

bool WaitClosed(int fd, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
  }
}

Status ListFunctions(Channel &ch, std::vector<std::string> *names) {
  wire::ListRequest req;
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_LIST, &req));
  wire::ListReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_LIST_REPLY, 0, &reply, &h));
  names->assign(reply.names().begin(), reply.names().end());
  return Status::Ok();
}

Status QueryInterface(Channel &ch, const std::string &name, wire::FunctionInterface *iface) {
  wire::QueryInterface req;
  req.set_name(name);
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_QUERY_INTERFACE, &req));
  wire::InterfaceReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_INTERFACE, 0, &reply, &h));
  *iface = reply.iface();
  return Status::Ok();
}

Status GetStatsText(Channel &ch, std::string *text) {
  wire::StatsRequest req;
  NINF_RETURN_IF_ERROR(ch.SendFrame(FRAME_STATS, &req));
  wire::StatsReply reply;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_STATS_REPLY, 0, &reply, &h));
  *text = reply.text();
  return Status::Ok();
}

std::map<std::string, std::string> GetStats(const Daemon &d) {
  Channel ch(d.Connect(), 5000);
  std::string text;
  Status st = GetStatsText(ch, &text);
  if (!st.ok()) throw std::runtime_error("stats: " + st.ToString());
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::size_t colon = line.find(':');
    if (colon != std::string::npos) out[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return out;
}

int64_t Stat(const std::map<std::string, std::string> &stats, const std::string &name) {
  auto it = stats.find(name);
  if (it == stats.end()) throw std::runtime_error("no stats line '" + name + "'");
  return std::stoll(it->second);
}

bool WaitStat(const Daemon &d, const std::string &name, int64_t value, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Stat(GetStats(d), name) == value) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string FakeInterface(const std::string &name) {
  return "name: \"" + name +
         "\"\n"
         "module: \"fake\"\n"
         "description: \"test executable\"\n"
         "params { name: \"n\" mode: MODE_IN type: TYPE_LONG }\n"
         "params { name: \"ms\" mode: MODE_IN type: TYPE_LONG }\n"
         "params { name: \"a\" mode: MODE_INOUT type: TYPE_DOUBLE\n"
         "         dims { nodes { op: PARAM value: 0 } } }\n";
}

void MakeFakeRegistry(const TempDir &dir, const std::vector<std::string> &names) {
  const char *env = std::getenv("FAKE_EXECUTABLE");
  std::string fake = env && *env ? env : FAKE_EXECUTABLE_PATH;
  for (const std::string &name : names) {
    dir.WriteFile(name + ".interface", FakeInterface(name));
    if (::symlink(fake.c_str(), dir.Join(name).c_str()) != 0)
      throw std::runtime_error("symlink " + dir.Join(name) + ": " + std::strerror(errno));
  }
}

namespace {

std::string ArgsBytes(int64_t ms, const std::string &payload) {
  wire::Args args;
  args.add_scalars()->set_i(static_cast<int64_t>(payload.size() / sizeof(double)));
  args.add_scalars()->set_i(ms);
  return FrameBytes(FRAME_ARGS, &args, payload);
}

}  // namespace

void SendCall(Channel &ch, const std::string &name, uint64_t call_id, int64_t ms,
              const std::string &payload, bool persistent, uint32_t heartbeat_ms) {
  wire::CallRequest call;
  call.set_name(name);
  call.set_call_id(call_id);
  call.set_persistent(persistent);
  call.set_heartbeat_ms(heartbeat_ms);
  WriteAll(ch.fd(), FrameBytes(FRAME_CALL, &call) + ArgsBytes(ms, payload));
}

void SendArgs(Channel &ch, int64_t ms, const std::string &payload) {
  WriteAll(ch.fd(), ArgsBytes(ms, payload));
}

Status RecvResult(Channel &ch, std::string *payload) {
  wire::Result result;
  FrameHeader h;
  NINF_RETURN_IF_ERROR(ch.RecvReply(FRAME_RESULT, uint64_t{1} << 32, &result, &h));
  payload->assign(h.payload_length, '\0');
  iovec into{payload->data(), payload->size()};
  return ch.RecvPayload({&into, 1});
}

std::string DoublePayload(int n) {
  std::string out(static_cast<std::size_t>(n) * sizeof(double), '\0');
  for (int i = 0; i < n; ++i) {
    double v = i;
    std::memcpy(out.data() + static_cast<std::size_t>(i) * sizeof v, &v, sizeof v);
  }
  return out;
}

std::string InfoField(const std::string &info, const std::string &key) {
  std::string needle = " " + key + "=";
  std::size_t at = (" " + info).find(needle);
  if (at == std::string::npos) throw std::runtime_error("no '" + key + "' in: " + info);
  std::size_t begin = at + needle.size() - 1;
  std::size_t end = info.find(' ', begin);
  return info.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace ninf::test
