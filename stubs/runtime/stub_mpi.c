/*
 * stub_mpi.c - ninf_stub_mpi.h: MPI under the stub runtime's team
 * (ninf_stub_team in ninf_stub.h).
 *
 * The runtime's own messages travel on a communicator of their own, as
 * nonblocking broadcasts from rank 0 (the blocking and nonblocking forms of a
 * collective never match each other, so every rank uses MPI_Ibcast). A rank
 * other than 0 spends most of its life waiting for the next call, and Open
 * MPI's waits spin: a warm executable between calls would burn a core per
 * rank. So a wait that may be long (`idle`) tests for completion, spinning
 * only for a moment after it starts and then sleeping between tests, longer
 * and longer up to kMaxSleepNs. A call that follows soon after the previous
 * one still finds the ranks spinning.
 */
#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "stubs/runtime/ninf_stub_mpi.h"

enum {
  kSpinNs = 2000000,     /* spin this long before the first sleep */
  kMinSleepNs = 20000,   /* first sleep */
  kMaxSleepNs = 2000000, /* longest sleep: the delay a call may see after an idle period */
  kChunk = 1 << 30,      /* bytes per broadcast: MPI counts are ints */
};

static MPI_Comm team_comm = MPI_COMM_NULL;    /* the runtime's messages */
static MPI_Comm routine_comm = MPI_COMM_NULL; /* the routine's */

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* MPI_Wait that sleeps once the wait has lasted kSpinNs. */
static int wait_politely(MPI_Request *req) {
  const long long start = now_ns();
  long sleep_ns = kMinSleepNs;
  for (;;) {
    int done = 0;
    if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return -1;
    if (done) return 0;
    if (now_ns() - start < kSpinNs) continue;
    struct timespec ts = {0, sleep_ns};
    nanosleep(&ts, NULL);
    if (sleep_ns < kMaxSleepNs) sleep_ns = sleep_ns * 2 < kMaxSleepNs ? sleep_ns * 2 : kMaxSleepNs;
  }
}

static int share(void *context, void *buf, size_t bytes, int idle) {
  (void)context;
  char *p = buf;
  do {
    const int n = bytes > (size_t)kChunk ? kChunk : (int)bytes;
    MPI_Request req;
    if (MPI_Ibcast(p, n, MPI_BYTE, 0, team_comm, &req) != MPI_SUCCESS) return -1;
    if (idle ? wait_politely(&req) != 0 : MPI_Wait(&req, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return -1;
    p += n;
    bytes -= (size_t)n;
  } while (bytes > 0);
  return 0;
}

MPI_Comm ninf_stub_mpi_comm(void) { return routine_comm; }

int ninf_stub_mpi_main(int argc, char **argv, const unsigned char *iface, size_t iface_len,
                       ninf_stub_invoke_fn invoke) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "%s: MPI_Init_thread failed\n", argv[0]);
    return 2;
  }
  ninf_stub_team team = {0, 1, NULL, share};
  MPI_Comm_rank(MPI_COMM_WORLD, &team.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &team.size);
  MPI_Comm_dup(MPI_COMM_WORLD, &team_comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &routine_comm);
  const int status = ninf_stub_team_main(argc, argv, iface, iface_len, invoke, &team);
  MPI_Comm_free(&routine_comm);
  MPI_Comm_free(&team_comm);
  MPI_Finalize();
  return status;
}
