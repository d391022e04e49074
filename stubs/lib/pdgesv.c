/*
 * pdgesv.c - LAPACK's dgesv (solve A X = B by LU with partial pivoting)
 * computed by ScaLAPACK's pdgesv over the ranks of an MPI communicator.
 *
 * The caller's view is dgesv's: on rank 0, a is the n x n matrix stored
 * column-major with leading dimension lda, b the n x nrhs right-hand sides
 * with leading dimension ldb, ipiv room for n pivots. On return rank 0 has
 * in a the factors L and U, in ipiv the 1-based global row interchanges, in
 * b the solution X, and in *info 0, -i for a bad i-th argument (the
 * argument's position in dgesv, without the communicator), or k > 0 if
 * U(k,k) is exactly zero (then b is left unchanged, as dgesv leaves it).
 *
 * The other ranks get NULL for a, ipiv and b (info may be NULL too) and
 * never touch them; they only need the same n, nrhs, lda and ldb as rank 0
 * (the argument checks run everywhere so that every rank takes the same
 * path). One case has no dgesv meaning: if some rank cannot allocate its
 * share of the matrix, *info is -1000 and a and b are unchanged.
 *
 * How: every call builds two BLACS grids on a private duplicate of comm: a
 * 1 x 1 grid that is rank 0 alone and describes the caller's arrays where
 * they are (any lda, no copy), and a 1 x P grid over all the ranks with
 * kBlock x kBlock blocks dealt out column-cyclically. Cpdgemr2d scatters a
 * and b from the first grid to the second, pdgesv_ solves there, and
 * Cpdgemr2d gathers a and b back. The grids and the duplicate are freed
 * before returning (Cblacs_gridexit, never Cblacs_exit, which would end
 * BLACS for the whole process), so the routine can run any number of times
 * in a long-lived MPI program.
 *
 * Why 1 x P: with a single process row every rank holds whole columns, so
 * each pivot search is local (the same first-largest-magnitude choice as
 * dgetf2's idamax), and ScaLAPACK's pdgetf2 broadcasts each panel's pivots
 * along the process row: every rank, rank 0 included, ends up with all n
 * entries of ipiv, already as global row indices. With more process rows
 * ipiv would be spread over them, block by block, and need a gather of its
 * own. For P = 2 (the cores of one host) 1 x 2 is also the squarest grid.
 */
#include <mpi.h>
#include <stdlib.h>

#include "stubs/lib/ninf_stdlib_mpi.h"

/* BLACS and ScaLAPACK, as Debian's libscalapack-openmpi exports them (it
 * ships no header). Int is the C int there. */
int Csys2blacs_handle(MPI_Comm comm);
void Cfree_blacs_system_handle(int handle);
void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int context);
void Cpdgemr2d(int m, int n, const double *a, int ia, int ja, const int *desca, double *b, int ib,
               int jb, const int *descb, int gcontext);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void pdgesv_(const int *n, const int *nrhs, double *a, const int *ia, const int *ja,
             const int *desca, int *ipiv, double *b, const int *ib, const int *jb, const int *descb,
             int *info);

enum {
  /* Rows and columns per block (pdgesv needs square ones). Of 32 to 256,
   * 64 and 128 were fastest for n = 4000 on 2 ranks: smaller blocks make
   * the trailing dgemm updates less efficient, larger ones the unblocked
   * panel factorization (pdgetf2) longer. 64 also spreads the columns of
   * smaller matrices over more ranks. */
  kBlock = 64,
  kNoContext = -1,   /* what Cblacs_gridinit gives a rank outside the grid */
  kNoMemory = -1000, /* *info when a rank cannot hold its share */
};

/* The BLACS grids of one call and this rank's place in the 1 x P one. */
typedef struct {
  MPI_Comm comm; /* private duplicate of the caller's communicator */
  int handle;    /* BLACS system handle of comm */
  int root;      /* 1 x 1 grid of rank 0, kNoContext on the other ranks */
  int grid;      /* 1 x P grid of all ranks */
  int npcol;
  int mycol;
} Grids;

/*
 * The grids are built on a duplicate of comm: Csys2blacs_handle returns the
 * handle already registered for a communicator, so freeing the handle of
 * comm itself could take it away from other BLACS users in the program.
 * Collective over comm.
 */
static void grids_open(MPI_Comm comm, Grids *g) {
  int size, nprow, myrow;
  MPI_Comm_dup(comm, &g->comm);
  MPI_Comm_size(g->comm, &size);
  g->handle = Csys2blacs_handle(g->comm);
  /* Cblacs_gridinit takes the system handle and returns the new grid in it;
   * "Row" order puts rank r of comm at (0, r), so rank 0 is (0, 0). */
  g->grid = g->handle;
  Cblacs_gridinit(&g->grid, "Row", 1, size);
  g->root = g->handle;
  Cblacs_gridinit(&g->root, "Row", 1, 1);
  Cblacs_gridinfo(g->grid, &nprow, &g->npcol, &myrow, &g->mycol);
}

static void grids_close(Grids *g) {
  if (g->root != kNoContext) Cblacs_gridexit(g->root);
  Cblacs_gridexit(g->grid);
  Cfree_blacs_system_handle(g->handle);
  MPI_Comm_free(&g->comm);
}

/* A ScaLAPACK array descriptor (DTYPE 1: dense block-cyclic, from (0, 0)). */
static void describe(int desc[9], int context, int m, int n, int mb, int nb, int lld) {
  desc[0] = 1;
  desc[1] = context;
  desc[2] = m;
  desc[3] = n;
  desc[4] = mb;
  desc[5] = nb;
  desc[6] = 0;
  desc[7] = 0;
  desc[8] = lld;
}

/* This rank's share of an n_rows x n_cols matrix on the 1 x P grid. */
typedef struct {
  double *data;
  int desc[9];
} Local;

static int local_alloc(Local *l, const Grids *g, int n_rows, int n_cols) {
  int block = kBlock, src = 0;
  int cols = numroc_(&n_cols, &block, &g->mycol, &src, &g->npcol);
  int lld = n_rows > 1 ? n_rows : 1; /* one process row: all rows are local */
  size_t count = (size_t)lld * (size_t)(cols > 0 ? cols : 1);
  l->data = malloc(count * sizeof *l->data);
  describe(l->desc, g->grid, n_rows, n_cols, kBlock, kBlock, lld);
  return l->data != NULL;
}

/* dgesv's argument checks, in its order; 0 if all are valid. */
static int check_args(int n, int nrhs, int lda, int ldb) {
  int min_ld = n > 1 ? n : 1;
  if (n < 0) return -1;
  if (nrhs < 0) return -2;
  if (lda < min_ld) return -4;
  if (ldb < min_ld) return -7;
  return 0;
}

/*
 * Scatters rank 0's a and b over the grid, solves, gathers a and b back and
 * copies the pivots into ipiv on rank 0. Returns pdgesv's info (on every
 * rank), or kNoMemory if a rank could not allocate its share.
 */
static int solve(const Grids *g, int n, int nrhs, double *a, int lda, int *ipiv, double *b,
                 int ldb) {
  const int one = 1;
  int rank;
  MPI_Comm_rank(g->comm, &rank);
  /* The caller's arrays as one block on the 1 x 1 grid (other ranks: -1). */
  int root_a[9], root_b[9];
  describe(root_a, g->root, n, n, n, n, lda);
  describe(root_b, g->root, n, nrhs, n, nrhs > 0 ? nrhs : 1, ldb);

  Local la, lb;
  /* Not &&: both must run, so that both pointers can be freed. */
  int ok = local_alloc(&la, g, n, n) & local_alloc(&lb, g, n, nrhs);
  /* ScaLAPACK's ipiv is LOCr(n) + block long; LOCr(n) = n on one process row. */
  int *lpiv = malloc(((size_t)n + kBlock) * sizeof *lpiv);
  ok = ok && lpiv != NULL;
  /* Every rank must agree before any collective call, or some would hang. */
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, g->comm);

  int info = kNoMemory;
  if (ok) {
    Cpdgemr2d(n, n, a, 1, 1, root_a, la.data, 1, 1, la.desc, g->grid);
    Cpdgemr2d(n, nrhs, b, 1, 1, root_b, lb.data, 1, 1, lb.desc, g->grid);
    pdgesv_(&n, &nrhs, la.data, &one, &one, la.desc, lpiv, lb.data, &one, &one, lb.desc, &info);
    Cpdgemr2d(n, n, la.data, 1, 1, la.desc, a, 1, 1, root_a, g->grid);
    Cpdgemr2d(n, nrhs, lb.data, 1, 1, lb.desc, b, 1, 1, root_b, g->grid);
    if (rank == 0)
      for (int i = 0; i < n; i++) ipiv[i] = lpiv[i];
  }
  free(lpiv);
  free(lb.data);
  free(la.data);
  return info;
}

/*
 * A 1 x 1 system, solved on rank 0 alone: ScaLAPACK's pdgetrf returns at
 * once for a single row without testing the pivot, so a zero a would give
 * info 0 and infinities in b where dgesv gives info 1 and leaves b alone.
 */
static int solve_scalar(int nrhs, const double *a, int *ipiv, double *b, int ldb) {
  ipiv[0] = 1;
  if (a[0] == 0.0) return 1;
  for (int j = 0; j < nrhs; j++) b[(size_t)j * (size_t)ldb] /= a[0];
  return 0;
}

void pdgesv_ninf(MPI_Comm comm, int n, int nrhs, double *a, int lda, int *ipiv, double *b, int ldb,
                 int *info) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  /* The scalars are the same everywhere, so every rank returns here alike. */
  int status = check_args(n, nrhs, lda, ldb);
  if (status != 0 || n == 0) {
    if (rank == 0) *info = status;
    return;
  }
  if (n == 1) {
    if (rank == 0) *info = solve_scalar(nrhs, a, ipiv, b, ldb);
    return;
  }
  Grids g;
  grids_open(comm, &g);
  status = solve(&g, n, nrhs, a, lda, ipiv, b, ldb);
  grids_close(&g);
  if (rank == 0) *info = status;
}
