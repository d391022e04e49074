// Descriptor hygiene every daemon needs before it serves anything: which
// descriptors it starts with, which its children inherit, and how many it
// may open. Builds on nothing but the C library.
#pragma once

#include <cstdint>

namespace ninf::daemon {

// A daemon started with stdin, stdout or stderr closed would hand those
// numbers to its first sockets, and then write its log into a peer's
// connection. Opens /dev/null on any of 0-2 that is closed. Call first
// thing in main().
void OpenStandardDescriptors();

// Descriptors inherited from whoever started the daemon (a shell, a test
// runner) must not reach the programs it starts: marks every descriptor
// above 2 close-on-exec.
void MarkInheritedFdsCloseOnExec();

// Every connection costs descriptors: raises the soft limit to the hard one
// and warns (event=fd_limit) when even that is below what `max_connections`
// connections, each with `fds_per_connection` descriptors, would need.
void RaiseFdLimit(int64_t max_connections, int fds_per_connection);

}  // namespace ninf::daemon
