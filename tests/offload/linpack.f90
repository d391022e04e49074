! linpack.f90 - an ordinary Fortran Linpack program that knows nothing of
! Ninf: it solves A x = b for a random A and b = A * ones with LAPACK's
! dgesv. The test (offload_test.py) builds it with plain `gfortran ...
! -llapack` and again with `ninffc --offload`, runs it with and without
! LD_PRELOAD=libninf_offload.so, and compares OUTFILE (INFO, x, the LU
! factors, the pivots: raw bytes) bit for bit.
!
!   linpack N OUTFILE
program linpack
  implicit none
  integer :: n, info, i, j, unit
  double precision, allocatable :: a(:, :), b(:)
  integer, allocatable :: ipiv(:)
  character(len=32) :: arg
  character(len=4096) :: outfile
  integer(8) :: seed

  if (command_argument_count() /= 2) then
    write (0, '(a)') 'usage: linpack N OUTFILE'
    stop 2
  end if
  call get_command_argument(1, arg)
  read (arg, *) n
  call get_command_argument(2, outfile)
  allocate (a(n, n), b(n), ipiv(n))

  seed = 12345_8
  do j = 1, n
    do i = 1, n
      a(i, j) = next()
    end do
  end do
  b = sum(a, dim=2)  ! A * ones: the solution is all ones

  call dgesv(n, 1, a, n, ipiv, b, n, info)

  open (newunit=unit, file=trim(outfile), access='stream', form='unformatted', &
        status='replace')
  write (unit) info, b, a, ipiv
  close (unit)
  print '(a, i0, a, i0, a, es10.3)', 'linpack n=', n, ' info=', info, &
    ' max|x - 1|=', maxval(abs(b - 1d0))

contains

  ! A linear congruential sequence in [-0.5, 0.5): the same matrix every run.
  double precision function next()
    seed = mod(seed*1103515245_8 + 12345_8, 2147483648_8)
    next = dble(seed)/2147483648d0 - 0.5d0
  end function next

end program linpack
