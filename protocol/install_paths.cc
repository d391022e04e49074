#include "protocol/install_paths.h"

#include <filesystem>
#include <system_error>
#include <vector>

// Meson's install folders (protocol/meson.build).
#ifndef NINF_INSTALL_PREFIX
#define NINF_INSTALL_PREFIX "/usr/local"
#define NINF_INSTALL_BINDIR "bin"
#define NINF_INSTALL_LIBDIR "lib"
#define NINF_INSTALL_LIBEXECDIR "libexec"
#define NINF_INSTALL_SYSCONFDIR "etc"
#define NINF_INSTALL_DATADIR "share"
#endif

namespace ninf {
namespace {

namespace fs = std::filesystem;

std::string SelfExe() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

}  // namespace

std::optional<std::string> PrefixOf(const std::string &exe, const std::string &bindir,
                                    const std::string &configured_prefix) {
  if (exe.empty() || bindir.empty()) return std::nullopt;
  fs::path dir = fs::path(exe).parent_path();
  fs::path bin(bindir);
  if (bin.is_absolute())
    return dir.lexically_normal() == bin.lexically_normal() ? std::optional(configured_prefix)
                                                            : std::nullopt;
  // Walk bindir's components up from the program's folder: each must match.
  std::vector<fs::path> parts(bin.begin(), bin.end());
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (it->empty() || *it == ".") continue;
    if (dir.filename() != *it) return std::nullopt;
    dir = dir.parent_path();
  }
  return dir.empty() ? std::nullopt : std::optional(dir.string());
}

std::optional<std::string> InstalledPrefix() {
  return PrefixOf(SelfExe(), NINF_INSTALL_BINDIR, NINF_INSTALL_PREFIX);
}

std::string InstalledDir(InstallDir which) {
  std::optional<std::string> prefix = InstalledPrefix();
  if (!prefix) return "";
  const char *option = "";
  switch (which) {
    case InstallDir::kLib:
      option = NINF_INSTALL_LIBDIR;
      break;
    case InstallDir::kLibexec:
      option = NINF_INSTALL_LIBEXECDIR;
      break;
    case InstallDir::kSysconf:
      option = NINF_INSTALL_SYSCONFDIR;
      break;
    case InstallDir::kData:
      option = NINF_INSTALL_DATADIR;
      break;
  }
  fs::path p(option);
  return p.is_absolute() ? p.string() : (fs::path(*prefix) / p).string();
}

std::string InstalledConfigFile(const std::string &name) {
  std::string etc = InstalledDir(InstallDir::kSysconf);
  return etc.empty() ? "" : (fs::path(etc) / "ninf" / name).string();
}

std::optional<std::string> BuildTreeRoot() {
  std::string exe = SelfExe();
  if (exe.empty()) return std::nullopt;
  fs::path root = fs::path(exe).parent_path().parent_path();
  std::error_code ec;
  if (!fs::is_directory(root / "meson-private", ec)) return std::nullopt;
  return root.string();
}

}  // namespace ninf
