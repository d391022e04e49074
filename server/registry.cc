#include "server/registry.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "daemon/log.h"
#include "daemon/settings_table.h"
#include "protocol/install_paths.h"
#include "protocol/layout.h"

#ifndef NINF_REGISTRY_INSTALL_DIR
#define NINF_REGISTRY_INSTALL_DIR "/usr/local/libexec/ninf/registry"
#endif

namespace fs = std::filesystem;

namespace ninf::server {
namespace {

constexpr std::string_view kSuffix = ".interface";

// Collects the first parse error with its position, for the warning.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string &message) override {
    if (first_.empty())
      first_ =
          "line " + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
  }
  const std::string &first() const { return first_; }

 private:
  std::string first_;
};

Status ReadFile(const fs::path &path, std::string *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)  // ifstream leaves errno set by open(2): say why, as every file error does
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "cannot open " + path.string() + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return Status::Ok();
}

// Loads one `NAME.interface` and checks its executable; the returned message
// explains why the entry is skipped.
Status LoadEntry(const fs::path &iface_path, const std::string &name, FunctionEntry *out) {
  if (!IsValidFunctionName(name))
    return Status(NINF_ERR_INVALID_ARGUMENT, "'" + name + "' is not a valid function name");
  std::string text;
  NINF_RETURN_IF_ERROR(ReadFile(iface_path, &text));
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &out->iface))
    return Status(NINF_ERR_INVALID_ARGUMENT, "cannot parse: " + errors.first());
  if (Status st = ValidateInterface(out->iface); !st.ok())
    return Status(NINF_ERR_INVALID_ARGUMENT, "invalid interface: " + st.message());
  if (out->iface.name() != name)
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "the file describes '" + out->iface.name() + "', not '" + name + "'");
  fs::path exe = iface_path.parent_path() / name;
  std::error_code ec;
  if (!fs::is_regular_file(exe, ec))
    return Status(NINF_ERR_INVALID_ARGUMENT, "no executable " + exe.string());
  if (::access(exe.c_str(), X_OK) != 0)
    return Status(NINF_ERR_INVALID_ARGUMENT, exe.string() + " is not executable");
  out->executable = exe.string();
  return Status::Ok();
}

// Reads every entry of one folder into *entries.
Status LoadFolder(const std::string &dir,
                  std::map<std::string, FunctionEntry, std::less<>> *entries,
                  std::vector<std::string> *warnings) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "cannot read registry folder '" + dir + "': " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path &path = it->path();
    std::string file = path.filename().string();
    if (file.size() <= kSuffix.size() || !file.ends_with(kSuffix)) continue;
    std::string name = file.substr(0, file.size() - kSuffix.size());
    FunctionEntry entry;
    if (Status st = LoadEntry(path, name, &entry); !st.ok()) {
      warnings->push_back("skipping " + path.string() + ": " + st.message());
      continue;
    }
    entry.folder = dir;
    entries->emplace(name, std::move(entry));
  }
  if (ec)
    return Status(NINF_ERR_INVALID_ARGUMENT,
                  "cannot list registry folder '" + dir + "': " + ec.message());
  return Status::Ok();
}

}  // namespace

bool IsValidFunctionName(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  auto ident = [](char c, bool first) {
    return c == '_' || std::isalpha(static_cast<unsigned char>(c)) ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  };
  if (!ident(name[0], true)) return false;
  return std::all_of(name.begin() + 1, name.end(), [&](char c) { return ident(c, false); });
}

std::vector<std::string> RegistryFolders(std::string_view setting, const std::string &stdlib_dir) {
  std::vector<std::string> folders;
  if (setting.empty()) return {stdlib_dir};
  for (const std::string &entry : daemon::SplitPathList(setting))
    folders.push_back(entry == kStandardLibraryWord ? stdlib_dir : entry);
  return folders;
}

std::map<std::string, FunctionEntry, std::less<>> ComposeFolders(
    std::vector<std::map<std::string, FunctionEntry, std::less<>>> folders,
    std::vector<RegistryOverride> *overrides) {
  std::map<std::string, FunctionEntry, std::less<>> served;
  for (auto &folder : folders)
    for (auto &[name, entry] : folder) {
      auto [it, inserted] = served.try_emplace(name);
      if (!inserted && overrides) overrides->push_back({name, entry.folder, it->second.folder});
      it->second = std::move(entry);
    }
  return served;
}

Status Registry::Load(const std::vector<std::string> &dirs, Registry *out,
                      std::vector<std::string> *warnings,
                      std::vector<RegistryOverride> *overrides) {
  if (dirs.empty()) return Status(NINF_ERR_INVALID_ARGUMENT, "no registry folder given");
  std::vector<std::map<std::string, FunctionEntry, std::less<>>> read;
  std::vector<fs::path> seen;
  for (const std::string &dir : dirs) {
    // The same folder twice would only override itself, function by
    // function: a slip in the list (stdlib named as a path too, say).
    std::error_code ec;
    fs::path same = fs::weakly_canonical(dir, ec);
    if (ec) same = fs::path(dir).lexically_normal();
    if (std::find(seen.begin(), seen.end(), same) != seen.end())
      return Status(NINF_ERR_INVALID_ARGUMENT,
                    "registry folder '" + dir + "' is listed twice (as '" + same.string() + "')");
    seen.push_back(same);
    NINF_RETURN_IF_ERROR(LoadFolder(dir, &read.emplace_back(), warnings));
  }
  Registry reg;
  reg.folders_ = dirs;
  reg.entries_ = ComposeFolders(std::move(read), overrides);
  *out = std::move(reg);
  return Status::Ok();
}

void LogOverrides(const std::vector<RegistryOverride> &overrides) {
  for (const RegistryOverride &o : overrides)
    spdlog::info("event=registry_override function={} folder={} replaces={}", o.name,
                 daemon::Quoted(o.folder), daemon::Quoted(o.replaced));
}

std::string Registry::dir() const {
  std::string joined;
  for (const std::string &f : folders_) joined += (joined.empty() ? "" : ":") + f;
  return joined;
}

const FunctionEntry *Registry::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto &[name, entry] : entries_) names.push_back(name);
  return names;
}

std::string DefaultRegistryDir() {
  // An installed ninfd serves its own prefix's library, wherever that is.
  std::string libexec = InstalledDir(InstallDir::kLibexec);
  if (!libexec.empty()) return (fs::path(libexec) / "ninf" / "registry").string();
  std::error_code ec;
  if (std::optional<std::string> build = BuildTreeRoot()) {
    fs::path build_tree = fs::path(*build) / "stubs" / "registry";
    if (fs::is_directory(build_tree, ec)) return build_tree.lexically_normal().string();
  }
  return NINF_REGISTRY_INSTALL_DIR;
}

}  // namespace ninf::server
