// Client-side helpers for the black-box daemon tests: raw frames (for the
// broken inputs a real client never sends), the ordinary requests, and calls
// to the fake executable of fake_executable.cc.
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ninf.pb.h"
#include "protocol/frame.h"
#include "protocol/status.h"
#include "protocol/wire.h"
#include "tests/server/daemon_fixture.h"

namespace ninf::test {

// The bytes of one frame: header, message, and a payload of `payload` bytes.
std::string FrameBytes(FrameType type, const google::protobuf::MessageLite *msg,
                       const std::string &payload = "");

// Writes all of `bytes`. Throws std::runtime_error on failure.
void WriteAll(int fd, const std::string &bytes);

// Waits until the peer closes the connection, discarding what it sends.
// False if it is still open after `timeout_ms`.
bool WaitClosed(int fd, int timeout_ms);

// The usual requests on an open channel.
Status ListFunctions(Channel &ch, std::vector<std::string> *names);
Status QueryInterface(Channel &ch, const std::string &name, wire::FunctionInterface *iface);
Status GetStatsText(Channel &ch, std::string *text);

// A stats reply as name -> value, fetched on a fresh connection.
std::map<std::string, std::string> GetStats(const Daemon &d);
// One value as an integer (throws if the name is missing).
int64_t Stat(const std::map<std::string, std::string> &stats, const std::string &name);
// Waits until stats line `name` has `value`; false after `timeout_ms`.
bool WaitStat(const Daemon &d, const std::string &name, int64_t value, int timeout_ms = 5000);

// Interface text of the fake executable's functions:
// NAME(IN long n, IN long ms, INOUT double a[n]).
std::string FakeInterface(const std::string &name);

// Fills `dir` with one registry entry per name: NAME.interface and a symlink
// NAME to the fake executable (FAKE_EXECUTABLE env or build-time default).
void MakeFakeRegistry(const TempDir &dir, const std::vector<std::string> &names);

// Sends FRAME_CALL and FRAME_ARGS (n = payload doubles, ms = delay) in one
// write, so the daemon sees the arguments pipelined behind the call.
void SendCall(Channel &ch, const std::string &name, uint64_t call_id, int64_t ms,
              const std::string &payload, bool persistent = false, uint32_t heartbeat_ms = 0);
// Sends one more FRAME_ARGS (persistent executables).
void SendArgs(Channel &ch, int64_t ms, const std::string &payload);
// Receives FRAME_RESULT and its payload, or the FRAME_ERROR as a Status.
Status RecvResult(Channel &ch, std::string *payload);

// A payload of n doubles 0, 1, 2, ...
std::string DoublePayload(int n);

// The value of `key` in the fake "info" text ("... key=value ..."); throws
// if it is missing.
std::string InfoField(const std::string &info, const std::string &key);

}  // namespace ninf::test
