// ninf-meta's request path in-process: a MetaServer (no listener, default
// settings, no keys) serves one end of a socketpair as a connection from a
// peer; the input is written to the other end in reads of sizes taken from
// it, the loop runs, and every reply is read back and checked to be a frame
// a client can decode. So the frames and the protobuf headers of REGISTER,
// LOAD, PLACE, OUTCOME, PROBED, QUERY_INTERFACE, LIST and STATS reach the
// real handlers and the server table, links and forecasts behind them.
//
// Input: byte 0 picks the peer address (bit 0: 127.0.0.1 or 127.0.0.2) and
// how the stream is cut (bits 1-2: whole, one byte, or random sizes); the
// rest is the stream. Each input gets a fresh MetaServer, shut down cleanly
// at the end (every handle closed), so that inputs do not leak into each
// other.
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>

#include "daemon/unique_fd.h"
#include "fuzz/fuzz_check.h"
#include "metaserver/meta_server.h"
#include "metaserver/meta_settings.h"
#include "ninf.pb.h"
#include "protocol/frame.h"

namespace {

// Checks the replies in `in` (complete frames only), returning the bytes used.
std::size_t CheckReplies(const std::string &in) {
  std::size_t at = 0;
  while (in.size() - at >= ninf::kFrameHeaderSize) {
    ninf::FrameHeader h;
    ninf::Status st = ninf::DecodeFrameHeader(reinterpret_cast<const uint8_t *>(in.data() + at),
                                              uint64_t{1} << 40, &h);
    FUZZ_CHECK(st.ok(), "ninf-meta sent a frame header a client cannot decode");
    const std::size_t whole = ninf::kFrameHeaderSize + h.header_length + h.payload_length;
    if (in.size() - at < whole) break;
    FUZZ_CHECK(h.payload_length == 0, "ninf-meta replied with a payload");
    const char *body = in.data() + at + ninf::kFrameHeaderSize;
    const int size = static_cast<int>(h.header_length);
    switch (h.type) {
      case ninf::FRAME_ERROR: {
        ninf::wire::Error err;
        FUZZ_CHECK(err.ParseFromArray(body, size), "an error reply does not parse");
        FUZZ_CHECK(err.code() != 0, "an error reply without a code");
        break;
      }
      case ninf::FRAME_META_ACK: {
        ninf::wire::MetaAck ack;
        FUZZ_CHECK(ack.ParseFromArray(body, size), "an ACK does not parse");
        break;
      }
      case ninf::FRAME_META_PLACEMENT: {
        ninf::wire::Placement p;
        FUZZ_CHECK(p.ParseFromArray(body, size), "a placement does not parse");
        break;
      }
      case ninf::FRAME_STATS_REPLY: {
        ninf::wire::StatsReply r;
        FUZZ_CHECK(r.ParseFromArray(body, size), "a stats reply does not parse");
        FUZZ_CHECK(r.text().size() < (std::size_t{1} << 20), "a stats reply over 1 MiB");
        break;
      }
      case ninf::FRAME_INTERFACE: {
        ninf::wire::InterfaceReply r;
        FUZZ_CHECK(r.ParseFromArray(body, size), "an interface reply does not parse");
        break;
      }
      case ninf::FRAME_LIST_REPLY: {
        ninf::wire::ListReply r;
        FUZZ_CHECK(r.ParseFromArray(body, size), "a list reply does not parse");
        break;
      }
      default:
        break;  // the handshake's frames (no keys: not sent)
    }
    at += whole;
  }
  return at;
}

uint64_t g_state = 0;
std::size_t NextCut(int mode, std::size_t left) {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 7;
  g_state ^= g_state << 17;
  switch (mode) {
    case 0:
      return left;
    case 1:
      return 1;
    default:
      return 1 + g_state % left;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  ninf::fuzz::QuietProtobuf();
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size < 1 || size > (std::size_t{1} << 20)) return 0;
  const std::string peer = (data[0] & 1) ? "127.0.0.2:40000" : "127.0.0.1:40000";
  const int mode = (data[0] >> 1) & 3;
  g_state = 0x9e3779b97f4a7c15ull ^ data[0];
  const uint8_t *stream = data + 1;
  const std::size_t total = size - 1;

  int fds[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) == 0,
             "socketpair");
  uv_loop_t loop;
  FUZZ_CHECK(uv_loop_init(&loop) == 0, "uv_loop_init");
  ninf::meta::MetaSettings settings;
  {
    ninf::meta::MetaServer meta(&loop, settings);
    meta.Serve(ninf::daemon::UniqueFd(fds[0]), peer);
    ninf::daemon::UniqueFd client(fds[1]);
    std::string replies;
    std::size_t pos = 0, checked = 0;
    // Write, run, read until the input is in and nothing more comes back.
    for (int idle = 0; idle < 3;) {
      bool progress = false;
      if (pos < total) {
        const std::size_t n = NextCut(mode, total - pos);
        const ssize_t w = ::send(client.get(), stream + pos, n, MSG_NOSIGNAL);
        if (w > 0) {
          pos += static_cast<std::size_t>(w);
          progress = true;
        } else if (w < 0 && errno != EAGAIN) {
          break;  // ninf-meta closed the connection (a protocol error)
        }
      }
      uv_run(&loop, UV_RUN_NOWAIT);
      char buf[65536];
      for (ssize_t r; (r = ::read(client.get(), buf, sizeof buf)) > 0;) {
        replies.append(buf, static_cast<std::size_t>(r));
        progress = true;
      }
      checked += CheckReplies(replies.substr(checked));
      idle = progress || pos < total ? 0 : idle + 1;
    }
    bool stopped = false;
    meta.Shutdown([&stopped] { stopped = true; });
    for (int i = 0; i < 100 && !stopped; ++i) uv_run(&loop, UV_RUN_NOWAIT);
    FUZZ_CHECK(stopped, "ninf-meta did not shut down");
  }
  uv_run(&loop, UV_RUN_NOWAIT);
  FUZZ_CHECK(uv_loop_close(&loop) == 0, "a libuv handle was left open");
  return 0;
}
