/*
 * ninf_stdlib.h - the routines of the standard library that ninfd serves by
 * default (the IDL files in stubs/idl describe each one to ninf-gen).
 *
 * They are plain C functions with the argument order of their IDL Define, so
 * the generated stubs call them directly and tests and examples can call
 * them locally. LAPACK's dgesv needs no code here: the executable calls
 * OpenBLAS's dgesv_ itself.
 */
#ifndef NINF_STDLIB_H
#define NINF_STDLIB_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * NAS EP kernel: 2^m pairs of uniform deviates from the NAS linear
 * congruential generator (a = 5^13, seed 271828183, modulus 2^46), turned
 * into Gaussian pairs (X, Y) by the Marsaglia polar method. Stores the sums
 * of X and Y in *sx and *sy and in q[l] the number of pairs with
 * max(|X|, |Y|) in [l, l+1), as doubles so the IDL can say `OUT double q[10]`.
 * m must be in [0, 50]; outside that *sx and *sy are NaN and q is zero.
 * Single-threaded and reentrant.
 */
void ep(long m, double *sx, double *sy, double q[10]);

/*
 * The pieces of ep() for splitting it over processes. ep_batches(m) is the
 * number of batches of a run (2^(m-16), or 1 for m < 16; 0 if m is out of
 * range). ep_range computes the sums and counts of batches first_batch ..
 * first_batch + batches - 1 only, in the layout of ep(); adding the results
 * of disjoint ranges that cover [0, ep_batches(m)) gives ep()'s result, up
 * to the rounding of the sums. A range outside that interval, or an m out of
 * range, gives NaN sums and zero counts; an empty range gives zeros.
 */
long ep_batches(long m);
void ep_range(long m, long first_batch, long batches, double *sx, double *sy, double q[10]);

/*
 * Checks sx and sy against the NAS reference values for m (classes S = 24,
 * W = 25, A = 28, B = 30, C = 32, D = 36, E = 40) with a relative tolerance
 * of 1e-8. Returns 1 if both match, 0 if not, -1 if m has no reference.
 */
int ep_verify(long m, double sx, double sy);

/* C = A * B for n x n row-major matrices (OpenBLAS dgemm). n <= 0: no-op. */
void dmmul(long n, const double *A, const double *B, double *C);

/* y = alpha * x + y for n doubles (OpenBLAS daxpy). n <= 0: no-op. */
void daxpy(long n, double alpha, const double *x, double *y);

/* Benchmark helpers: the cheapest possible calls of each transfer shape. */
void ninf_null(void);               /* nothing at all */
void echo(long n, double *a);       /* INOUT: a comes back unchanged */
void sink(long n, const double *a); /* IN only: a is received, ignored */
void source(long n, double *a);     /* OUT only: a[i] = i */

#ifdef __cplusplus
}
#endif

#endif /* NINF_STDLIB_H */
