// ninf_stub_main: the main() of every Ninf executable (see ninf_stub.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "call_server.h"
#include "interface_text.h"
#include "layout.h"
#include "ninf_stub.h"

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

}  // namespace

extern "C" int ninf_stub_main(int argc, char **argv, const unsigned char *iface_bytes,
                              size_t iface_len, ninf_stub_invoke_fn invoke) {
  ninf::wire::FunctionInterface iface;
  if (!iface.ParseFromArray(iface_bytes, static_cast<int>(iface_len))) {
    std::fprintf(stderr, "%s: embedded interface is corrupt\n", argv[0]);
    return 2;
  }
  if (argc > 1 && std::strcmp(argv[1], "--noop") == 0) return 0;
  if (argc > 1 && std::strcmp(argv[1], "--interface") == 0) {
    std::fputs(ninf::stub::InterfaceText(iface).c_str(), stdout);
    return 0;
  }
  if (argc > 1 || ::fcntl(ninf::kControlFd, F_GETFD) < 0) return Usage(iface, argv[0]);
  // If ninfd dies, so do we: an orphaned executable would go on computing
  // (and sending heartbeats) for a call nobody can account for any more.
  // ninfd may have died before prctl took effect; then we were reparented
  // and the parent differs. (Comparing with 1 would be wrong: ninfd is PID 1
  // when it is a container's entrypoint.)
  const pid_t parent = ::getppid();
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    std::perror("prctl(PR_SET_PDEATHSIG)");
    return 2;
  }
  if (::getppid() != parent) return 2;
  // A client that vanishes must show up as an error from send(), not kill us.
  if (::signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
    std::perror("signal(SIGPIPE)");
    return 2;
  }
  ninf::stub::CallServer server(iface, invoke, ninf::kControlFd);
  return server.Run();
}
