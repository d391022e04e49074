/*
 * ninf_stub_mpi.h - the runtime of Backend "MPI" executables.
 *
 * ninf-gen's stub of a Backend "MPI" Define calls ninf_stub_mpi_main()
 * instead of ninf_stub_main(); it links libninf_stub_mpi (pkg-config
 * ninf-stub-mpi) and is compiled with mpicc. ninfd starts such an executable
 * as an MPI job (mpirun, or srun --mpi=pmix) with the ranks its
 * configuration gives the function. Every rank runs the routine for every
 * call: rank 0 talks to the client and passes the IN scalars, and the IN and
 * INOUT arrays unless the IDL says Distribute "root", on to the others
 * (ninf_stub.h, ninf_stub_team). The results are rank 0's.
 */
#ifndef NINF_STUB_MPI_H
#define NINF_STUB_MPI_H

#include <mpi.h>

#include "ninf_stub.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The whole main() of a Backend "MPI" executable: MPI_Init_thread (funneled:
 * the runtime's helper threads never call MPI), ninf_stub_team_main on every
 * rank, MPI_Finalize. Returns the process exit status.
 */
int ninf_stub_mpi_main(int argc, char **argv, const unsigned char *iface, size_t iface_len,
                       ninf_stub_invoke_fn invoke);

/*
 * The communicator the routine computes on: every rank of the job, in an
 * MPI_COMM_WORLD duplicate of its own, so the routine's messages never meet
 * the runtime's. The IDL passes it as the Calls argument MPI_COMM.
 */
MPI_Comm ninf_stub_mpi_comm(void);

#ifdef __cplusplus
}
#endif

#endif /* NINF_STUB_MPI_H */
