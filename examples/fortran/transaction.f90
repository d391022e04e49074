! transaction.f90 - a transaction block from Fortran (docs/transactions.md):
! four NAS EP calls of the same size (so their sums must agree) and a daxpy
! chain that adds up two of their histograms, recorded between
! Ninf_transaction_begin and Ninf_transaction_end and run as one dataflow
! graph: the EP calls at once (on several servers when NINF_METASERVER
! places them), the sums after the histograms they read.
!
!   NINF_SERVER=host:port ./transaction_f [m]      (m defaults to 22)
!
! Everything a recorded call writes is declared ASYNCHRONOUS: the calls run
! at Ninf_transaction_end, after the Ninf_call that named them returned.
! Exits with status 1 when the block fails or the sums disagree.
program transaction
  use ninf
  implicit none
  integer, parameter :: dp = kind(1.0d0), ncalls = 4
  real(dp), asynchronous :: sx(ncalls), sy(ncalls), q(0:9, ncalls), total(0:9)
  integer :: m, i, ierr
  character(len=16) :: arg

  m = 22
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) m
  end if
  total = 0

  ierr = Ninf_transaction_begin()
  do i = 1, ncalls
    ierr = Ninf_call('ep', m, sx(i), sy(i), q(:, i))
  end do
  ierr = Ninf_call('daxpy', 10, 1.0_dp, q(:, 1), total)   ! total = q1
  ierr = Ninf_call('daxpy', 10, 1.0_dp, q(:, 2), total)   ! total = q1 + q2
  ierr = Ninf_transaction_end()
  if (ierr /= 0) then
    call Ninf_perror('Ninf_transaction_end')
    stop 1
  end if

  do i = 1, ncalls
    print '(a, i0, a, es23.15, a, es23.15, a, f10.0)', 'call ', i, ': sx=', sx(i), ' sy=', sy(i), &
        ' pairs=', sum(q(:, i))
  end do
  if (any(abs(total - (q(:, 1) + q(:, 2))) > 0.5_dp) .or. any(abs(sx - sx(1)) > 0)) then
    print '(a)', 'FAILED'
    stop 1
  end if
  print '(a, i0, a)', 'the block of ', Ninf_transaction_calls(), ' calls: VERIFIED'
end program transaction
