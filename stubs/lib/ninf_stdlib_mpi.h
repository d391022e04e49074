/*
 * ninf_stdlib_mpi.h - the MPI routines of the standard library (Backend
 * "MPI" in the IDL): each is called by every rank of `comm` at once, with
 * the same scalar arguments, and leaves its results on rank 0.
 *
 * Kept apart from ninf_stdlib.h so that the serial routines and their users
 * need no mpi.h. Link ep_mpi with ep.c; pdgesv_ninf needs ScaLAPACK
 * (Debian: -lscalapack-openmpi) and a LAPACK/BLAS.
 */
#ifndef NINF_STDLIB_MPI_H
#define NINF_STDLIB_MPI_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The NAS EP kernel of ep() split over the ranks of comm: the same m on
 * every rank; on rank 0, *sx, *sy and q[10] as ep() would give them (the
 * sums up to rounding, the counts exactly). Other ranks are left with their
 * own share of the sums and counts.
 */
void ep_mpi(MPI_Comm comm, long m, double *sx, double *sy, double *q);

/*
 * LAPACK dgesv (A X = B by LU with partial pivoting) over the ranks of comm
 * with ScaLAPACK. a, ipiv and b are used on rank 0 only (NULL elsewhere);
 * n, nrhs, lda and ldb must be the same on every rank. On rank 0 a, ipiv,
 * b and *info come back as dgesv returns them.
 */
void pdgesv_ninf(MPI_Comm comm, int n, int nrhs, double *a, int lda, int *ipiv, double *b, int ldb,
                 int *info);

#ifdef __cplusplus
}
#endif

#endif /* NINF_STDLIB_MPI_H */
