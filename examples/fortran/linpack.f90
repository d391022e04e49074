! linpack.f90 - Linpack through Ninf from Fortran: solves a random dense
! system A x = b with a remote LAPACK dgesv and checks the residual.
!
!   NINF_SERVER=host:port ./linpack_f [n [routine]]
!
! n defaults to 500, routine to 'dgesv'; 'pdgesv' solves the same system
! with ScaLAPACK as an MPI job on the server (docs/mpi.md).
!
! The call takes exactly the arguments of the local dgesv. The program exits
! with status 1 when the call fails or the solution is not accurate, which
! makes it a test as well as an example (it also runs compiled with
! -fdefault-integer-8: the module converts the 8-byte integers).
program linpack
  use ninf
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer :: n, nrhs, lda, ldb, info, ierr
  integer, allocatable :: ipiv(:)
  real(dp), allocatable :: a(:, :), a0(:, :), b(:, :), b0(:, :)
  real(dp) :: residual, seconds, gflops
  character(len=64) :: routine

  n = problem_size()
  routine = 'dgesv'
  if (command_argument_count() >= 2) call get_command_argument(2, routine)
  nrhs = 1
  lda = n
  ldb = n
  allocate (a(lda, n), b(ldb, nrhs), ipiv(n))
  call random_seed()
  call random_number(a)
  call random_number(b)
  a = a - 0.5_dp
  b = b - 0.5_dp
  a0 = a  ! dgesv overwrites a with its LU factors and b with x
  b0 = b

  seconds = wall_time()
  ierr = Ninf_call(trim(routine), n, nrhs, a, lda, ipiv, b, ldb, info)
  seconds = wall_time() - seconds
  if (ierr /= 0) then
    call Ninf_perror(trim(routine))
    stop 1
  end if
  if (info /= 0) then
    print '(a, a, i0)', trim(routine), ' failed: info = ', info
    stop 1
  end if

  ! The scaled residual of HPL: ||A x - b|| / (||A|| ||x|| n eps), O(1) when
  ! the solve is backward stable.
  residual = maxval(abs(matmul(a0, b) - b0)) / &
             (maxval(sum(abs(a0), dim=2)) * maxval(abs(b)) * n * epsilon(1.0_dp))
  gflops = (2.0_dp / 3.0_dp * real(n, dp)**3 + 2.0_dp * real(n, dp)**2) / seconds * 1.0e-9_dp
  print '(a, i0, a, f8.4, a, f8.3, a, es10.3, a)', 'linpack n=', n, '  ', seconds, ' s  ', &
      gflops, ' Gflop/s  residual=', residual, merge('  PASSED', '  FAILED', residual < 16.0_dp)
  if (residual >= 16.0_dp) stop 1
  ! (The main program's arrays are not freed at exit: LeakSanitizer would
  ! report them.)
  deallocate (a, a0, b, b0, ipiv)

contains

  integer function problem_size()
    character(len=32) :: arg
    integer :: status
    problem_size = 500
    if (command_argument_count() < 1) return
    call get_command_argument(1, arg)
    read (arg, *, iostat=status) problem_size
    if (status /= 0 .or. problem_size < 1) then
      print '(a)', 'usage: linpack_f [n >= 1 [routine (dgesv)]]'
      stop 2
    end if
  end function problem_size

  real(dp) function wall_time()
    integer(kind=8) :: count, rate
    call system_clock(count, rate)
    wall_time = real(count, dp) / real(rate, dp)
  end function wall_time

end program linpack
