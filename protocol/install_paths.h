// install_paths.h - where an installed program finds its own files.
//
// The prefix is found from the program's own location (/proc/self/exe is
// PREFIX/bin/ninfd), not compiled in: a tree installed with DESTDIR, or
// moved elsewhere, still finds its registry, its config files and its
// pkg-config files, and a build-tree program is never mistaken for an
// installed one (it reads no /etc/ninf). The folder names are Meson's
// options (bindir, libdir, ...), relative to the prefix or absolute
// (sysconfdir is /etc when the prefix is /usr).
#pragma once

#include <optional>
#include <string>

#include "protocol/protocol_export.h"

namespace ninf {

enum class InstallDir { kLib, kLibexec, kSysconf, kData };

// PREFIX when this program runs as PREFIX/<bindir>/NAME; nullopt otherwise.
NINF_PROTOCOL_API std::optional<std::string> InstalledPrefix();

// An install folder of this program's installation ("" when not
// installed): PREFIX/<option>, or the option itself when it is absolute.
NINF_PROTOCOL_API std::string InstalledDir(InstallDir dir);

// SYSCONFDIR/ninf/NAME of this program's installation ("" when not
// installed): the config file an installed daemon reads by default.
NINF_PROTOCOL_API std::string InstalledConfigFile(const std::string &name);

// BUILD when this program runs as BUILD/<folder>/NAME from a Meson build
// tree (BUILD holds meson-private); nullopt otherwise.
NINF_PROTOCOL_API std::optional<std::string> BuildTreeRoot();

// Pure: the prefix of a program at `exe` given Meson's bindir option
// (relative or absolute) and the configured prefix; nullopt when `exe` is
// not in a bindir.
NINF_PROTOCOL_API std::optional<std::string> PrefixOf(const std::string &exe,
                                                      const std::string &bindir,
                                                      const std::string &configured_prefix);

}  // namespace ninf
