/*
 * unblocked.h - the classic, unblocked LINPACK solve (dgefa / dgesl), the
 * "Local, unblocked" curve of seed 004's Fig. 4: what a user who cannot
 * tune their own code runs. Column-oriented Gaussian elimination with
 * partial pivoting, one daxpy per column, written here from the algorithm
 * (no BLAS, no blocking), column-major like LINPACK.
 */
#ifndef NINF_BENCH_SEED004_UNBLOCKED_H
#define NINF_BENCH_SEED004_UNBLOCKED_H

/*
 * Factors the n x n column-major a (leading dimension lda) in place into
 * L and U; ipvt[k] is the row swapped with row k (0-based). Returns 0, or
 * k + 1 when U[k][k] is exactly zero (dgesl would divide by it).
 */
int unblocked_dgefa(double *a, int lda, int n, int *ipvt);

/* Solves A x = b with dgefa's factors; x overwrites b. */
void unblocked_dgesl(const double *a, int lda, int n, const int *ipvt, double *b);

#endif /* NINF_BENCH_SEED004_UNBLOCKED_H */
