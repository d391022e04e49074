/*
 * ep_mpi.c - the NAS EP kernel of ep.c split over the ranks of an MPI
 * communicator.
 *
 * NAS EP is a run of 2^(m-16) independent batches of 2^16 pairs (one batch
 * for m < 16), and batch k starts at its own point of the generator, so the
 * batches can go to any rank in any order. Each rank takes one contiguous
 * range of them (the first total % size ranks one batch more) and computes
 * its partial sums and counts with ep_range(), the kernel of ep() itself;
 * one MPI_Reduce adds them up on rank 0. The counts are exact integers in
 * doubles (below 2^53), so they equal ep()'s; the sums are added in another
 * order and may differ from ep()'s in the last bits.
 *
 * Every rank must call with the same m and gets valid output pointers. Only
 * rank 0's results are the run's; the others keep their own partial sums
 * and counts. An m out of range gives NaN sums and zero counts, as ep().
 */
#include <mpi.h>

#include "stubs/lib/ninf_stdlib.h"
#include "stubs/lib/ninf_stdlib_mpi.h"

enum { kReduced = 12 }; /* sx, sy, q[0..9]: one message for all of them */

/* The batches [*first, *first + *count) of `rank` out of `size` ranks. */
static void share_of(long total, int rank, int size, long *first, long *count) {
  long base = total / size;
  long extra = total % size;
  /* Written without rank * total, which could overflow for m near 50. */
  *first = rank * base + (rank < extra ? rank : extra);
  *count = base + (rank < extra ? 1 : 0);
}

void ep_mpi(MPI_Comm comm, long m, double *sx, double *sy, double *q) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  long first, count;
  share_of(ep_batches(m), rank, size, &first, &count);
  /* An m out of range has no batches: every rank gets NaN, and so does the sum. */
  double part[kReduced];
  ep_range(m, first, count, &part[0], &part[1], &part[2]);

  if (rank == 0) {
    MPI_Reduce(MPI_IN_PLACE, part, kReduced, MPI_DOUBLE, MPI_SUM, 0, comm);
  } else {
    MPI_Reduce(part, NULL, kReduced, MPI_DOUBLE, MPI_SUM, 0, comm);
  }
  *sx = part[0];
  *sy = part[1];
  for (int l = 0; l < 10; l++) q[l] = part[2 + l];
}
