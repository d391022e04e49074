// ninfd's settings: one value through ApplySetting for every row of the
// table, a TOML config file through ParseInvocation (--config), and a
// command line through ParseInvocation (CLI11), plus the host:port parser of
// --server.
//
// Properties: whatever is accepted lies within the row's bounds; a log level
// is one of the names; an error is an invalid-argument error.
//
// Input: byte 0 selects the path; the rest is the value, the TOML text, or
// the command line (one argument a line).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "protocol/address.h"
#include "protocol/default_ports.h"
#include "protocol/status.h"
#include "server/settings.h"

namespace {

using ninf::Status;
using ninf::server::Settings;
using ninf::server::SettingSpec;
using ninf::server::SettingsTable;

void CheckBounds(const Settings &s) {
  for (const SettingSpec &spec : SettingsTable()) {
    if (auto *field = std::get_if<int64_t Settings::*>(&spec.field)) {
      FUZZ_CHECK(s.*(*field) >= spec.min && s.*(*field) <= spec.max, spec.name);
    }
  }
  for (const auto &[name, keys] : s.function_limits) {
    const ninf::server::FunctionLimits limits = s.LimitsOf(name);
    FUZZ_CHECK(limits.wall_seconds >= 0 && limits.cpu_seconds >= 0 && limits.max_calls >= 1,
               name.c_str());
  }
}

void CheckError(const Status &st) {
  FUZZ_CHECK(st.ok() || st.code() == NINF_ERR_INVALID_ARGUMENT, st.ToString().c_str());
}

void FuzzValue(const std::string &raw) {
  for (const SettingSpec &spec : SettingsTable()) {
    Settings s;
    Status st = ninf::server::ApplySetting(spec, raw, "fuzz", &s);
    CheckError(st);
    if (st.ok()) CheckBounds(s);
  }
}

// The config file lives in memory: a memfd, opened again through /proc, so
// nothing is written to disk. Created once, rewritten for each input.
struct ConfigFile {
  int fd = -1;
  std::string path;
};

const ConfigFile &Config() {
  static const ConfigFile file = [] {
    ConfigFile f;
    f.fd = ::memfd_create("ninfd-fuzz.toml", 0);
    FUZZ_CHECK(f.fd >= 0, "memfd_create failed");
    f.path = "/proc/self/fd/" + std::to_string(f.fd);
    return f;
  }();
  return file;
}

Status Invoke(const std::vector<std::string> &args, ninf::server::Invocation *inv) {
  std::vector<const char *> argv = {"ninfd"};
  for (const std::string &a : args) argv.push_back(a.c_str());
  auto no_env = [](const char *) -> const char * { return nullptr; };
  return ninf::server::ParseInvocation(static_cast<int>(argv.size()), argv.data(), no_env, inv);
}

void FuzzConfigFile(std::string_view text) {
  const ConfigFile &file = Config();
  if (::ftruncate(file.fd, 0) != 0) return;
  if (::pwrite(file.fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return;
  ninf::server::Invocation inv;
  Status st = Invoke({"--config", file.path}, &inv);
  CheckError(st);
  if (st.ok()) CheckBounds(inv.settings);
}

void FuzzCommandLine(std::string_view text) {
  std::vector<std::string> args;
  std::size_t pos = 0;
  while (pos <= text.size() && args.size() < 64) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    args.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  // --config would read whatever file the input names (/dev/zero...).
  for (const std::string &a : args)
    if (a.find("conf") != std::string::npos) return;
  ninf::server::Invocation inv;
  Status st = Invoke(args, &inv);
  CheckError(st);
  if (!st.ok()) return;
  if (!inv.exit_now) CheckBounds(inv.settings);
  if (!inv.status_server.empty()) {
    ninf::HostPort defaults{inv.settings.listen, static_cast<int>(inv.settings.port)};
    ninf::HostPort hp;
    if (ninf::ParseHostPort(inv.status_server, defaults, &hp).ok())
      FUZZ_CHECK(hp.port >= 1 && hp.port <= 65535, "port out of range");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  if (size < 1) return 0;
  std::string_view rest(reinterpret_cast<const char *>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzValue(std::string(rest));
      break;
    case 1:
      FuzzConfigFile(rest);
      break;
    case 2:
      FuzzCommandLine(rest);
      break;
    case 3: {
      ninf::HostPort hp;
      if (ninf::ParseHostPort(rest, ninf::HostPort{"localhost", ninf::kNinfdPort}, &hp).ok())
        FUZZ_CHECK(hp.port >= 1 && hp.port <= 65535 && !hp.host.empty(), "bad host:port");
      break;
    }
  }
  return 0;
}
