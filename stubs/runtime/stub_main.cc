// ninf_stub_main: the main() of every Ninf executable (see ninf_stub.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "protocol/launch.h"
#include "protocol/layout.h"
#include "stubs/runtime/call_server.h"
#include "stubs/runtime/interface_text.h"
#include "stubs/runtime/ninf_stub.h"
#include "stubs/runtime/team.h"

namespace {

int Usage(const ninf::wire::FunctionInterface &iface, const char *argv0) {
  std::fprintf(stderr,
               "%s: the Ninf executable of '%s'.\n"
               "It is started by ninfd, which hands it a client connection on fd 3.\n"
               "By hand: %s --interface   print the interface\n"
               "         %s --noop        exit at once (start-up cost)\n",
               argv0, ninf::Signature(iface).c_str(), argv0, argv0);
  return 2;
}

// The control channel: fd 3 when ninfd started this process itself; claimed
// from ninfd (launch.h) when a launcher did (mpirun, srun), over TCP when
// ninfd may be on another host, and then *redirect_listener is where ninfd's
// clients come. -1 when there is none: started by hand.
int ControlChannel(const char *argv0, int *redirect_listener) {
  *redirect_listener = -1;
  const char *path = std::getenv(ninf::kLaunchSocketEnv);
  const char *address = std::getenv(ninf::kLaunchAddressEnv);
  const char *token = std::getenv(ninf::kLaunchTokenEnv);
  if ((!path && !address) || !token)
    return ::fcntl(ninf::kControlFd, F_GETFD) < 0 ? -1 : ninf::kControlFd;
  int fd = -1;
  constexpr int kClaimTimeoutMs = 10000;
  ninf::Status st = address ? ninf::ClaimControlChannelTcp(address, token, kClaimTimeoutMs, &fd,
                                                           redirect_listener)
                            : ninf::ClaimControlChannel(path, token, kClaimTimeoutMs, &fd);
  if (!st.ok()) std::fprintf(stderr, "%s: %s\n", argv0, st.ToString().c_str());
  return fd;
}

// If our parent dies, so do we: an orphaned executable would go on computing
// (and sending heartbeats) for a call nobody can account for any more. The
// parent is ninfd, or the launcher that ninfd started (mpirun; Kill() there
// reaches the ranks this way). It may have died before prctl took effect;
// then we were reparented and the parent differs. (Comparing with 1 would be
// wrong: ninfd is PID 1 when it is a container's entrypoint.)
bool DieWithParent() {
  const pid_t parent = ::getppid();
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    std::perror("prctl(PR_SET_PDEATHSIG)");
    return false;
  }
  return ::getppid() == parent;
}

int RunExecutable(int argc, char **argv, const unsigned char *iface_bytes, size_t iface_len,
                  ninf_stub_invoke_fn invoke, const ninf_stub_team *team) {
  ninf::wire::FunctionInterface iface;
  if (!iface.ParseFromArray(iface_bytes, static_cast<int>(iface_len))) {
    std::fprintf(stderr, "%s: embedded interface is corrupt\n", argv[0]);
    return 2;
  }
  const bool root = !team || team->rank == 0;
  if (argc > 1 && std::strcmp(argv[1], "--noop") == 0) return 0;
  if (argc > 1 && std::strcmp(argv[1], "--interface") == 0) {
    if (root) std::fputs(ninf::stub::InterfaceText(iface).c_str(), stdout);
    return 0;
  }
  if (argc > 1) return root ? Usage(iface, argv[0]) : 2;
  if (!DieWithParent()) return 2;
  // A client that vanishes must show up as an error from send(), not kill us.
  if (::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    std::perror("signal(SIGPIPE)");
    return 2;
  }
  if (!root) return ninf::stub::ServeTeam(iface, invoke, team);
  int redirect_listener = -1;
  const int control = ControlChannel(argv[0], &redirect_listener);
  if (control < 0) {
    ninf::stub::ShareExit(team, 2);
    return Usage(iface, argv[0]);
  }
  ninf::stub::CallServer server(iface, invoke, control, team);
  server.set_redirect_listener(redirect_listener);
  const int status = server.Run();
  ninf::stub::ShareExit(team, status);
  return status;
}

}  // namespace

extern "C" int ninf_stub_main(int argc, char **argv, const unsigned char *iface_bytes,
                              size_t iface_len, ninf_stub_invoke_fn invoke) {
  return RunExecutable(argc, argv, iface_bytes, iface_len, invoke, nullptr);
}

extern "C" int ninf_stub_team_main(int argc, char **argv, const unsigned char *iface_bytes,
                                   size_t iface_len, ninf_stub_invoke_fn invoke,
                                   const ninf_stub_team *team) {
  return RunExecutable(argc, argv, iface_bytes, iface_len, invoke, team);
}
