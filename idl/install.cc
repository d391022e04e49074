#include "idl/install.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "idl/checks.h"
#include "idl/link_errors.h"
#include "idl/process.h"
#include "protocol/install_paths.h"

namespace ninf::idl {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CompilerWords(bool mpi) {
  const char *env = std::getenv(mpi ? "MPICC" : "CC");
  std::vector<std::string> words = SplitWords(env ? env : "");
  if (words.empty()) words.push_back(mpi ? "mpicc" : "cc");
  return words;
}

// The folder of this ninf-gen's own .pc files: its installation's
// libdir/pkgconfig, or a build tree's meson-uninstalled; "" if neither.
std::string OwnPkgConfigDir() {
  std::string lib = InstalledDir(InstallDir::kLib);
  if (!lib.empty()) return (fs::path(lib) / "pkgconfig").string();
  std::optional<std::string> build = BuildTreeRoot();
  return build ? (fs::path(*build) / "meson-uninstalled").string() : "";
}

// `package`: ninf-stub, or ninf-stub-mpi for Backend "MPI" executables.
// pkg-config looks in PKG_CONFIG_PATH (the user's choice wins), then in
// this ninf-gen's own folder, then in the system's: a ninf-gen builds
// against the runtime it came with, without PKG_CONFIG_PATH, even where
// another installation's ninf-stub.pc sits in /usr.
Status RuntimeFlags(bool verbose, const std::string &package, std::vector<std::string> *flags) {
  std::string own = OwnPkgConfigDir();
  const char *path = std::getenv("PKG_CONFIG_PATH");
  if (!own.empty())
    setenv("PKG_CONFIG_PATH", (path && *path ? std::string(path) + ":" + own : own).c_str(), 1);
  const char *env = std::getenv("PKG_CONFIG");
  std::vector<std::string> argv = SplitWords(env ? env : "");
  if (argv.empty()) argv.push_back("pkg-config");
  argv.insert(argv.end(), {"--cflags", "--libs", package});
  if (verbose) std::cerr << CommandLine(argv) << "\n";
  std::string out;
  int exit_code = 0;
  NINF_RETURN_IF_ERROR(RunProgram(argv, &out, &exit_code));
  if (exit_code != 0)
    return Status(
        NINF_ERR_NOT_SUPPORTED,
        "pkg-config cannot find " + package +
            (own.empty() ? std::string(" (this ninf-gen is neither installed nor in a build tree)")
                         : " in " + own + " (is Ninf's stub runtime installed there?)") +
            ": set PKG_CONFIG_PATH to the folder holding " + package + ".pc");
  *flags = SplitWords(out);
  // The runtime may live outside the loader's search path (a build tree, a
  // prefix such as /opt): record every -L folder as a run path so the
  // executable finds libninf_stub when ninfd starts it.
  std::vector<std::string> rpaths;
  for (const std::string &f : *flags)
    if (f.size() > 2 && f.compare(0, 2, "-L") == 0) rpaths.push_back("-Wl,-rpath," + f.substr(2));
  flags->insert(flags->end(), rpaths.begin(), rpaths.end());
  return Status::Ok();
}

// Runs the compiler for Define `d`. Its messages reach the user as it
// wrote them (the IDL's lines, thanks to #line), except a link that failed
// only on undefined symbols: that is said in the IDL's terms instead, the
// function, the symbol and the Library line to add (the raw text with -v).
Status Compile(const std::vector<std::string> &argv, const Define &d, bool verbose) {
  if (verbose) std::cerr << CommandLine(argv) << "\n";
  std::string output;
  int exit_code = 0;
  NINF_RETURN_IF_ERROR(RunProgram(argv, &output, &exit_code, /*with_stderr=*/true));
  std::vector<std::string> undefined;
  if (exit_code != 0) undefined = UndefinedSymbols(output);
  const bool explained = !undefined.empty() && OnlyUndefinedSymbols(output);
  if (!explained || verbose) std::cerr << output << std::flush;
  if (exit_code == 0) return Status::Ok();
  if (!undefined.empty()) return Status(NINF_ERR_EXECUTABLE, LinkErrorMessage(d, undefined));
  return Status(NINF_ERR_EXECUTABLE, "compiling " + d.name + " failed (" + argv[0] +
                                         " exit status " + std::to_string(exit_code) + ")");
}

// Moves `from` over `to` atomically.
Status Replace(const fs::path &from, const fs::path &to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) {
    fs::remove(from, ec);
    return Status(NINF_ERR_INTERNAL, "cannot install " + to.string() + ": " + ec.message());
  }
  return Status::Ok();
}

Status InstallOne(const Compilation &c, const Define &d, const Output &o,
                  const InstallOptions &options, const std::vector<std::string> &runtime) {
  fs::path registry(options.registry_dir);
  std::string idl_dir = fs::path(options.idl_path).parent_path().string();
  std::string tag = "." + std::to_string(getpid()) + ".tmp";
  fs::path exe_tmp = registry / ("." + d.name + tag);
  std::string source = (fs::path(options.build_dir) / o.stub_file).string();
  std::vector<std::string> argv = CompileCommand(c, d, source, exe_tmp.string(), idl_dir, runtime);
  Status st = Compile(argv, d, options.verbose);
  if (!st.ok()) {
    std::error_code ec;
    fs::remove(exe_tmp, ec);
    return st;
  }
  NINF_RETURN_IF_ERROR(Replace(exe_tmp, registry / d.name));

  fs::path iface_tmp = registry / ("." + o.interface_file + tag);
  {
    std::ofstream out(iface_tmp, std::ios::binary | std::ios::trunc);
    out << o.interface_text;
    out.close();
    if (!out) return Status(NINF_ERR_INTERNAL, "cannot write " + iface_tmp.string());
  }
  NINF_RETURN_IF_ERROR(Replace(iface_tmp, registry / o.interface_file));
  return Status::Ok();  // Install says what was installed, once all of it is
}

}  // namespace

std::vector<std::string> ResolveRequired(const std::string &required, const std::string &idl_dir) {
  std::vector<std::string> words = SplitWords(required);
  for (std::string &w : words)
    if (!w.empty() && w[0] != '-' && fs::path(w).is_relative() && !idl_dir.empty())
      w = (fs::path(idl_dir) / w).lexically_normal().string();
  return words;
}

std::vector<std::string> CompileCommand(const Compilation &c, const Define &d,
                                        const std::string &source, const std::string &exe,
                                        const std::string &idl_dir,
                                        const std::vector<std::string> &runtime_flags) {
  std::vector<std::string> argv = CompilerWords(IsMpi(d));
  for (const std::string &flags : c.file.compile_options)
    for (std::string &w : SplitWords(flags)) argv.push_back(std::move(w));
  argv.insert(argv.end(), {"-o", exe, source});
  for (std::string &w : ResolveRequired(d.required.value, idl_dir)) argv.push_back(std::move(w));
  for (const std::string &flags : c.file.libraries)
    for (std::string &w : SplitWords(flags)) argv.push_back(std::move(w));
  argv.insert(argv.end(), runtime_flags.begin(), runtime_flags.end());
  return argv;
}

std::string InstallSummary(const std::vector<std::string> &names, const std::string &registry_dir,
                           bool standard_library) {
  std::string out;
  for (const std::string &name : names)
    out += "installed " + name + ": " + (fs::path(registry_dir) / name).string() + " and " +
           (fs::path(registry_dir) / (name + ".interface")).string() + "\n";
  if (names.empty()) return out;
  const std::string it = names.size() == 1 ? "it" : "them";
  const std::string reload = "`kill -HUP <pid of ninfd>` (or `systemctl reload ninfd`)";
  if (standard_library)
    return out + "To serve " + it + ": this is the standard library's folder; a running ninfd " +
           "serves " + it + " after " + reload + ". `ninfd --list` then shows " + it + ".\n";
  out += "To serve " + it + ": a running ninfd whose registry lists " + registry_dir + " serves " +
         it + " after " + reload + "; otherwise start ninfd with `" +
         CommandLine({"ninfd", "--registry", "stdlib", "--registry", registry_dir}) + "`";
  // ':' separates NINF_REGISTRY's folders, so such a folder has no
  // variable form (and no TOML array entry either).
  if (registry_dir.find(':') == std::string::npos)
    out += " (or NINF_REGISTRY=" + CommandLine({"stdlib:" + registry_dir}) + ")";
  return out + ". `ninfd --list` then shows " + it + ".\n";
}

Status Install(const Compilation &c, const InstallOptions &options) {
  std::error_code ec;
  fs::create_directories(options.registry_dir, ec);
  if (ec)
    return Status(NINF_ERR_INTERNAL, "cannot create " + options.registry_dir + ": " + ec.message());
  // The runtime's flags, asked once per kind of executable the file has.
  std::vector<std::string> runtime[2];
  bool asked[2] = {false, false};
  std::vector<std::string> installed;
  Status st;
  for (std::size_t i = 0; i < c.outputs.size() && st.ok(); ++i) {
    const Define &d = c.file.defines[i];
    const int mpi = IsMpi(d) ? 1 : 0;
    if (!asked[mpi])
      st = RuntimeFlags(options.verbose, mpi ? "ninf-stub-mpi" : "ninf-stub", &runtime[mpi]);
    asked[mpi] = true;
    if (st.ok()) st = InstallOne(c, d, c.outputs[i], options, runtime[mpi]);
    if (st.ok()) installed.push_back(d.name);
  }
  // Say what was installed, even when a later Define failed, and how a
  // ninfd comes to serve it: silence left users guessing (issue 31). An
  // absolute path, to paste.
  fs::path dir = fs::absolute(options.registry_dir, ec).lexically_normal();
  if (ec) dir = fs::path(options.registry_dir);
  if (!dir.has_filename() && dir.has_parent_path()) dir = dir.parent_path();  // "dir/"
  const std::string libexec = InstalledDir(InstallDir::kLibexec);
  const bool standard =
      !libexec.empty() && dir == (fs::path(libexec) / "ninf" / "registry").lexically_normal();
  std::cout << InstallSummary(installed, dir.string(), standard) << std::flush;
  return st;
}

}  // namespace ninf::idl
