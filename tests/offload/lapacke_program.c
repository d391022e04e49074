/*
 * lapacke_program.c - an ordinary LAPACKE/CBLAS program that knows nothing
 * of Ninf: the test (offload_test.py) builds it with plain `cc ... -llapacke
 * -llapack -lblas`, and again with `ninfcc --offload`, and runs it with and
 * without LD_PRELOAD=libninf_offload.so. Every result (arrays and INFOs)
 * goes to OUTFILE as raw bytes, so that runs compare bit for bit.
 *
 *   lapacke_program N OUTFILE
 *
 * The calls: LAPACKE_dgesv (row-major), LAPACKE_dgetrf + LAPACKE_dgetrs
 * (column-major), LAPACKE_dposv (row-major), LAPACKE_dsyev (column-major,
 * with vectors), cblas_dgemm (row-major, B transposed), the Fortran dsyev_
 * with a workspace query (lwork = -1) first, LAPACKE_dgesv on a singular
 * matrix (INFO > 0), the Fortran dgesv_ on a sub-block whose leading
 * dimension is larger than its rows and whose array ends at a page no one
 * may read (only the block's rows may be touched), and the Fortran dgesv_
 * with an illegal leading dimension (INFO = -4, and XERBLA's message on
 * stderr; ipiv, an OUT array, is left as it was).
 */
#include <cblas.h>
#include <lapacke.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned long long seed = 12345;

/* A deterministic sequence in [-0.5, 0.5): the same matrices every run. */
static double next(void) {
  seed = (seed * 6364136223846793005ULL + 1442695040888963407ULL);
  return (double)(seed >> 11) / 9007199254740992.0 - 0.5;
}

static double *matrix(int rows, int cols) {
  double *m = malloc(sizeof(double) * (size_t)rows * (size_t)cols);
  if (!m) {
    perror("malloc");
    exit(1);
  }
  for (int i = 0; i < rows * cols; i++) m[i] = next();
  return m;
}

static FILE *out;

static void put(const void *p, size_t bytes) {
  if (fwrite(p, 1, bytes, out) != bytes) {
    perror("fwrite");
    exit(1);
  }
}

static void put_info(const char *what, lapack_int info) {
  printf("%s info=%d\n", what, (int)info);
  put(&info, sizeof info);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s N OUTFILE\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[1]);
  const int nrhs = 2;
  if (n < 2) {
    fprintf(stderr, "N must be at least 2\n");
    return 2;
  }
  out = fopen(argv[2], "wb");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  const size_t nn = (size_t)n * (size_t)n;
  lapack_int *ipiv = malloc(sizeof(lapack_int) * (size_t)n);

  /* dgesv, row-major. */
  double *a = matrix(n, n), *b = matrix(n, nrhs);
  put_info("LAPACKE_dgesv", LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, nrhs, a, n, ipiv, b, nrhs));
  put(a, sizeof(double) * nn);
  put(b, sizeof(double) * (size_t)n * nrhs);
  put(ipiv, sizeof(lapack_int) * (size_t)n);

  /* dgetrf + dgetrs, column-major. */
  double *f = matrix(n, n), *rhs = matrix(n, nrhs);
  put_info("LAPACKE_dgetrf", LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, f, n, ipiv));
  put_info("LAPACKE_dgetrs", LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'N', n, nrhs, f, n, ipiv, rhs, n));
  put(f, sizeof(double) * nn);
  put(rhs, sizeof(double) * (size_t)n * nrhs);

  /* dposv, row-major, on S = R' R + n I (symmetric positive definite). */
  double *r = matrix(n, n), *s = calloc(nn, sizeof(double)), *sb = matrix(n, nrhs);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, r, n, r, n, 0.0, s, n);
  for (int i = 0; i < n; i++) s[i * n + i] += n;
  put_info("LAPACKE_dposv", LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', n, nrhs, s, n, sb, nrhs));
  put(s, sizeof(double) * nn);
  put(sb, sizeof(double) * (size_t)n * nrhs);

  /* dsyev, column-major, eigenvalues and vectors of a symmetric matrix. */
  double *y = matrix(n, n), *w = malloc(sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) y[i + j * n] = y[j + i * n];
  put_info("LAPACKE_dsyev", LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'U', n, y, n, w));
  put(y, sizeof(double) * nn);
  put(w, sizeof(double) * (size_t)n);

  /* dgemm, row-major, C = 0.5 A B' + 2 C. */
  double *ga = matrix(n, n), *gb = matrix(n, n), *gc = matrix(n, n);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 0.5, ga, n, gb, n, 2.0, gc, n);
  printf("cblas_dgemm done\n");
  put(gc, sizeof(double) * nn);

  /* The Fortran dsyev_, as LAPACK code calls it: the workspace query, then
   * the call with the size it answered. */
  double *z = matrix(n, n), *zw = malloc(sizeof(double) * (size_t)n), query = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) z[i + j * n] = z[j + i * n];
  lapack_int lwork = -1, info = 0, nn_ = n, one_rhs = 1;
  LAPACK_dsyev("N", "L", &nn_, z, &nn_, zw, &query, &lwork, &info);
  put_info("dsyev_ query", info);
  printf("dsyev_ query lwork=%d\n", (int)query);
  put(&query, sizeof query);
  lwork = (lapack_int)query;
  double *work = malloc(sizeof(double) * (size_t)lwork);
  LAPACK_dsyev("N", "L", &nn_, z, &nn_, zw, work, &lwork, &info);
  put_info("dsyev_", info);
  put(work, sizeof(double)); /* LAPACK leaves the optimal lwork in work[0] */
  put(z, sizeof(double) * nn);
  put(zw, sizeof(double) * (size_t)n);

  /* A singular matrix: column 3 is zero, INFO = 3 as LAPACK reports it. */
  double *sing = matrix(n, n), *sing_b = matrix(n, 1);
  memset(sing + 2 * (size_t)n, 0, sizeof(double) * (size_t)n);
  put_info("LAPACKE_dgesv singular",
           LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, sing, n, ipiv, sing_b, n));
  put(sing, sizeof(double) * nn);

  /* The bottom n x n block of an (n + 3) x n column-major array (lda =
   * n + 3), which ends where an unreadable page begins: LAPACK reads and
   * writes only the block's rows, so a copy of lda * n doubles from the
   * block's start would cross into the page. Rows 0-2 (another tile) stay
   * as they were. */
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t tall_bytes = sizeof(double) * (size_t)(n + 3) * (size_t)n;
  const size_t tall_pages = (tall_bytes + page - 1) / page;
  unsigned char *region = mmap(NULL, (tall_pages + 1) * page, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED || mprotect(region + tall_pages * page, page, PROT_NONE) != 0) {
    perror("mmap");
    return 1;
  }
  double *tall = (double *)(region + tall_pages * page - tall_bytes);
  for (size_t i = 0; i < (size_t)(n + 3) * (size_t)n; i++) tall[i] = next();
  double *tall_b = matrix(n, 1);
  lapack_int tall_lda = n + 3;
  LAPACK_dgesv(&nn_, &one_rhs, tall + 3, &tall_lda, ipiv, tall_b, &nn_, &info);
  put_info("dgesv_ sub-block lda = n + 3", info);
  put(tall, tall_bytes);
  put(tall_b, sizeof(double) * (size_t)n);
  put(ipiv, sizeof(lapack_int) * (size_t)n);

  /* An illegal argument: lda = n - 1 < n. LAPACK reports INFO = -4 (and
   * XERBLA prints its message) before touching anything. */
  for (int i = 0; i < n; i++) ipiv[i] = -7;
  double *bad = matrix(n, n), *bad_b = matrix(n, 1);
  lapack_int short_lda = n - 1;
  LAPACK_dgesv(&nn_, &one_rhs, bad, &short_lda, ipiv, bad_b, &nn_, &info);
  put_info("dgesv_ lda = n - 1", info);
  put(bad, sizeof(double) * nn);
  put(bad_b, sizeof(double) * (size_t)n);
  put(ipiv, sizeof(lapack_int) * (size_t)n); /* untouched: -7 */

  if (fclose(out) != 0) {
    perror("fclose");
    return 1;
  }
  free(a);
  free(b);
  free(f);
  free(rhs);
  free(r);
  free(s);
  free(sb);
  free(y);
  free(w);
  free(ga);
  free(gb);
  free(gc);
  free(z);
  free(zw);
  free(work);
  free(sing);
  free(sing_b);
  free(bad);
  free(bad_b);
  free(tall_b);
  munmap(region, (tall_pages + 1) * page);
  free(ipiv);
  return 0;
}
