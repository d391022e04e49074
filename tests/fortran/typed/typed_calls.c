/*
 * Typed calls from C: the standard library's headers (ninf_blas.h,
 * ninf_lapack.h, ninf_ep.h) and this test's ninf_typed.h, which ninf-gen
 * --header wrote from typed.idl. Every call passes what C's conversions
 * make right only with a prototype: integer literals where the IDL says
 * double (the dgemm that crashed through Ninf_call), an int where it says
 * long, a float and complex values by value.
 */
#include <complex.h>
#include <ninf_blas.h>
#include <ninf_ep.h>
#include <ninf_lapack.h>
#include <ninf_typed.h>
#include <stdio.h>
#include <string.h>

enum { N = 40 };

static int failed(const char *what) {
  fprintf(stderr, "FAILED: %s\n", what);
  return 0;
}

/* C = A B with alpha 1 and beta 0 written as integers; the values are exact
 * in binary, so the result must equal the local product bit for bit. */
static int dgemm_with_integer_literals(void) {
  static double a[N * N], b[N * N], c[N * N];
  for (int k = 0; k < N * N; ++k) {
    a[k] = (k % 7) - 3;
    b[k] = (k % 5) * 0.5;
    c[k] = 1.0;
  }
  if (ninf_dgemm('N', 'N', N, N, N, 1, a, N, b, N, 0, c, N) != 0) {
    Ninf_perror("ninf_dgemm");
    return 0;
  }
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      double sum = 0;
      for (int k = 0; k < N; ++k) sum += a[k * N + i] * b[j * N + k];
      if (c[j * N + i] != sum) return failed("dgemm: C differs from the local A B");
    }
  return 1;
}

/* A diagonally dominant system whose solution is 1, 2, ..., N. */
static int dgesv_solves(void) {
  static double a[N * N], b[N];
  int ipiv[N], info = -1;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) a[j * N + i] = i == j ? 2.0 * N : 1.0 / (1 + i + j);
  for (int i = 0; i < N; ++i) {
    b[i] = 0;
    for (int j = 0; j < N; ++j) b[i] += a[j * N + i] * (j + 1);
  }
  if (ninf_dgesv(N, 1, a, N, ipiv, b, N, &info) != 0 || info != 0) {
    Ninf_perror("ninf_dgesv");
    return 0;
  }
  for (int i = 0; i < N; ++i)
    if (b[i] < i + 1 - 1e-9 || b[i] > i + 1 + 1e-9) return failed("dgesv: wrong solution");
  return 1;
}

/* ep's m is a long: an int goes, converted by the prototype. */
static int ep_sync_and_async(void) {
  double sx, sy, q[10], sx2, sy2, q2[10];
  if (ninf_ep(16, &sx, &sy, q) != 0) {
    Ninf_perror("ninf_ep");
    return 0;
  }
  int id = ninf_ep_async(16, &sx2, &sy2, q2);
  if (id < 0 || Ninf_wait(id) != 0) {
    Ninf_perror("ninf_ep_async");
    return 0;
  }
  if (sx != sx2 || sy != sy2 || memcmp(q, q2, sizeof q) != 0)
    return failed("ep: the async call differs");
  return 1;
}

/* Every IDL type through one routine (typed.idl). `a` is a double: 8 is
 * passed as 8.0. */
static int alltypes(void) {
  short sa[2] = {1, -2};
  int ia[2] = {3, -4};
  long la[2] = {5, 1L << 40};
  float fa[2] = {0.5f, -1.5f};
  double big_a[2] = {2.25, -3};
  float complex za[2] = {1 + 2 * I, -3};
  double complex wa[2] = {4 - 5 * I, 0.5 * I};
  char ca[4] = {0};
  double sum = 0;
  if (ninf_alltypes('x', 2, 3, 4, 0.5f, 0.25, 1 + 1 * I, 2 - 3 * I, "Ninf", sa, ia, la, fa, big_a,
                    za, wa, ca, 7, 8, 9, &sum) != 0) {
    Ninf_perror("ninf_alltypes");
    return 0;
  }
  if (sum != 158.75) return failed("alltypes: wrong sum of the scalars");
  if (sa[1] != -4 || ia[1] != -8 || la[1] != 1L << 41 || fa[1] != -3.0f || big_a[0] != 4.5 ||
      za[0] != 2 + 4 * I || wa[1] != 1.0 * I)
    return failed("alltypes: an array was not doubled");
  if (memcmp(ca, "Ninf", 4) != 0) return failed("alltypes: wrong characters");
  return 1;
}

int main(void) {
  int ok = dgemm_with_integer_literals();
  ok &= dgesv_solves();
  ok &= ep_sync_and_async();
  ok &= alltypes();
  if (!ok) return 1;
  printf("typed C calls ok\n");
  return 0;
}
