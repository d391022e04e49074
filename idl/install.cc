#include "idl/install.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "idl/checks.h"
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

Status Run(const std::vector<std::string> &argv, bool verbose, const std::string &what) {
  if (verbose) std::cerr << CommandLine(argv) << "\n";
  int exit_code = 0;
  NINF_RETURN_IF_ERROR(RunProgram(argv, nullptr, &exit_code));
  if (exit_code != 0)
    return Status(NINF_ERR_EXECUTABLE,
                  what + " failed (" + argv[0] + " exit status " + std::to_string(exit_code) + ")");
  return Status::Ok();
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
  Status st = Run(argv, options.verbose, "compiling " + d.name);
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
  if (options.verbose)
    std::cerr << "installed " << (registry / d.name).string() << " and " << o.interface_file
              << "\n";
  return Status::Ok();
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

Status Install(const Compilation &c, const InstallOptions &options) {
  std::error_code ec;
  fs::create_directories(options.registry_dir, ec);
  if (ec)
    return Status(NINF_ERR_INTERNAL, "cannot create " + options.registry_dir + ": " + ec.message());
  // The runtime's flags, asked once per kind of executable the file has.
  std::vector<std::string> runtime[2];
  bool asked[2] = {false, false};
  for (std::size_t i = 0; i < c.outputs.size(); ++i) {
    const Define &d = c.file.defines[i];
    const int mpi = IsMpi(d) ? 1 : 0;
    if (!asked[mpi])
      NINF_RETURN_IF_ERROR(
          RuntimeFlags(options.verbose, mpi ? "ninf-stub-mpi" : "ninf-stub", &runtime[mpi]));
    asked[mpi] = true;
    NINF_RETURN_IF_ERROR(InstallOne(c, d, c.outputs[i], options, runtime[mpi]));
  }
  return Status::Ok();
}

}  // namespace ninf::idl
