// The process's interrupt check, and the one wait on a socket that honours
// it. A language binding whose user can interrupt a blocking call (Python's
// Ctrl-C) sets a check through libninf (Ninf_binding_set_interrupt,
// client/ninf_binding.h); every blocking wait of the protocol layer (a
// Channel's read or write, a TCP connect, a TLS handshake) then waits in
// slices of at most kInterruptSliceMs and asks the check between them, and
// at once after a signal interrupted the wait (EINTR). A nonzero answer
// ends the wait with InterruptedStatus().
//
// The hook lives here, not in client/, because the waits do and protocol/
// may include nothing above it. Only libninf sets it: ninfd and the
// executables never do, and their waits stay one poll each.
#pragma once

#include "protocol/protocol_export.h"
#include "protocol/status.h"

namespace ninf {

// Returns nonzero when the waiting thread's call is to end now. Called from
// whichever thread waits, with no lock of the library held; must be
// thread-safe and quick (it runs every slice of every wait).
using InterruptCheck = int (*)();

// The longest a wait sleeps between two checks while a check is set.
inline constexpr int kInterruptSliceMs = 100;

// Sets (null: clears) the process's check. Thread-safe; a wait already
// sleeping sees the change at its next slice.
NINF_PROTOCOL_API void SetInterruptCheck(InterruptCheck check);

// True when a check is set and says to stop now (for waits that are no
// poll, e.g. a two-phase collect's pause between COLLECTs).
NINF_PROTOCOL_API bool InterruptRequested();

// NINF_ERR_CANCELLED, saying that the interrupt check ended the wait.
NINF_PROTOCOL_API Status InterruptedStatus();

enum class WaitResult { kReady, kTimeout, kInterrupted, kError };

// poll(2) for `events` on `fd`, for up to `timeout_ms` (< 0: forever)
// without progress. EINTR never ends the wait by itself: without a check
// the poll is simply repeated (as every wait here always did); with one,
// the check is asked at once and the wait goes on for the time left.
// kError leaves the poll's errno in *err. Without a check set this is one
// poll with the whole timeout, exactly as before the hook existed.
NINF_PROTOCOL_API WaitResult WaitFd(int fd, short events, int timeout_ms, int *err);

}  // namespace ninf
