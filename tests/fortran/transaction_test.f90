! transaction_test.f90 - a transaction block from Fortran: a daxpy chain
! whose intermediate is discarded, an EP call beside it, and a dgesv with
! INTEGER(8) ipiv and info, whose converted temporaries must live until the
! block ends and be copied back then. Prints "ok" lines; exits 1 on the
! first failure.
program transaction_test
  use ninf
  use solve_check
  implicit none
  integer, parameter :: n = 100, m = 50
  ! ASYNCHRONOUS: the block writes them at Ninf_transaction_end, after the
  ! Ninf_call that named them has returned.
  real(dp), allocatable, asynchronous :: a(:, :), b(:, :)
  real(dp), allocatable :: a0(:, :), b0(:, :)
  real(dp), asynchronous :: x(m), y(m), z(m), sx, sy, q(10)
  real(dp) :: y0(m), z0(m)
  integer(8), asynchronous :: ipiv8(n), info8
  integer :: i, ierr, code

  call random_system(n, a, b, a0, b0)
  x = 2.0_dp
  y = [(real(i, dp), i = 1, m)]
  z = 10.0_dp
  y0 = y
  z0 = z
  ipiv8 = -1
  info8 = -1

  ierr = Ninf_transaction_begin()
  call check(ierr == 0, 'Ninf_transaction_begin')
  ierr = Ninf_call('daxpy', m, 2.0_dp, x, y)        ! y = y + 4
  call check(ierr == 0, 'daxpy recorded')
  ierr = Ninf_call('daxpy', m, 1.0_dp, y, z)        ! z = z + y, after the first
  call check(ierr == 0, 'second daxpy recorded')
  ierr = Ninf_call('ep', 24, sx, sy, q)
  call check(ierr == 0, 'ep recorded')
  ierr = Ninf_call('dgesv', n, 1, a, n, ipiv8, b, n, info8)
  call check(ierr == 0, 'dgesv recorded')
  call check(all(abs(z - z0) < 1e-12_dp) .and. info8 == -1, 'nothing ran before the end')
  ierr = Ninf_transaction_discard(y)
  call check(ierr == 0, 'y discarded')
  ierr = Ninf_transaction_end()
  if (ierr /= 0) call Ninf_perror('Ninf_transaction_end')
  call check(ierr == 0, 'Ninf_transaction_end')

  call check(all(abs(z - (z0 + y0 + 4.0_dp)) < 1e-12_dp), 'the chain read the intermediate')
  call check(all(abs(y - y0) < 1e-12_dp), 'the discarded intermediate was not written back')
  call check(verify_ep_class_s(sx, sy), 'ep in the block verified')
  call check(info8 == 0 .and. all(ipiv8 >= 1 .and. ipiv8 <= n), &
             'INTEGER(8) ipiv and info copied back at the end')
  call check(residual_ok(a0, b0, b), 'dgesv in the block solved the system')
  call check(Ninf_transaction_calls() == 4, 'four calls in the block')
  call check(Ninf_transaction_call_error(4) == NINF_OK, 'call 4 succeeded')
  call check(Ninf_transaction_call_error(5) == -1, 'no call 5')

  ! Calls are statements of their own: .and. may evaluate either side first.
  ierr = Ninf_transaction_end()
  code = Ninf_get_error()
  call check(ierr /= 0 .and. code == NINF_ERR_INVALID_ARGUMENT, 'an end without a block is refused')
  ! A main program's allocatables are not freed at its end: LeakSanitizer
  ! (scripts/sanitize.sh) would count them.
  deallocate(a, b, a0, b0)

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
      print '(a)', 'FAILED: ' // what
      stop 1
    end if
    print '(a)', 'ok: ' // what
  end subroutine check

end program transaction_test
