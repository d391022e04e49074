! async_test.f90 - asynchronous calls from Fortran: two Ninf_call_async
! (EP and dgesv) collected by Ninf_wait_all, and one collected by
! Ninf_wait. The dgesv calls pass INTEGER(8) ipiv and info, so the module
! converts them through temporaries that must outlive the start of the call
! and be copied back when it is waited for. Prints "ok" lines; exits 1 on
! the first failure.
program async_test
  use ninf
  use solve_check
  implicit none
  integer, parameter :: n = 200
  real(dp), allocatable, asynchronous :: a(:, :), b(:, :)
  real(dp), allocatable :: a0(:, :), b0(:, :)
  real(dp), asynchronous :: sx, sy, q(10)
  integer(8), asynchronous :: ipiv8(n), info8
  integer :: ipiv(n), info, id_ep, id_solve, ierr, code

  ! The pivots of a synchronous call with default integers, for comparison.
  call random_system(n, a, b, a0, b0)
  ierr = Ninf_call('dgesv', n, 1, a, n, ipiv, b, n, info)
  call check(ierr == 0 .and. info == 0, 'synchronous dgesv')

  a = a0
  b = b0
  ipiv8 = -1
  info8 = -1
  id_ep = Ninf_call_async('ep', 24, sx, sy, q)
  id_solve = Ninf_call_async('dgesv', n, 1, a, n, ipiv8, b, n, info8)
  call check(id_ep >= 0 .and. id_solve >= 0 .and. id_ep /= id_solve, 'two calls started')
  ierr = Ninf_wait_all()
  call check(ierr == 0, 'Ninf_wait_all')
  call check(verify_ep_class_s(sx, sy), 'asynchronous ep verified')
  call check(info8 == 0 .and. all(ipiv8 == ipiv), 'INTEGER(8) ipiv and info copied back at Ninf_wait_all')
  call check(residual_ok(a0, b0, b), 'asynchronous dgesv solution')

  a = a0
  b = b0
  ipiv8 = -1
  info8 = -1
  id_solve = Ninf_call_async('dgesv', n, 1, a, n, ipiv8, b, n, info8)
  call check(id_solve >= 0, 'third call started')
  call check(Ninf_wait(id_solve) == 0, 'Ninf_wait')
  call check(info8 == 0 .and. all(ipiv8 == ipiv), 'INTEGER(8) ipiv and info copied back at Ninf_wait')
  ! Calls are statements of their own: .and. may evaluate either side first.
  ierr = Ninf_wait(id_solve)
  code = Ninf_get_error()
  call check(ierr /= 0 .and. code == NINF_ERR_INVALID_ID, &
             'a second wait for the same id is refused')

  ! A call refused before it starts returns -1 and leaves nothing to wait for.
  id_solve = Ninf_call_async('dgesv', n, 1, a, n, ipiv8, b(1:n:2, :), n, info8)
  code = Ninf_get_error()
  call check(id_solve == -1 .and. code == NINF_ERR_ARGUMENT_MISMATCH, &
             'a refused asynchronous call returns -1')
  call check(Ninf_wait_all() == 0, 'nothing left to wait for')
  ! (The main program's arrays are not freed at exit: LeakSanitizer would
  ! report them.)
  deallocate (a, b, a0, b0)

contains

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (condition) then
      print '(2a)', 'ok: ', what
      return
    end if
    print '(2a)', 'FAILED: ', what
    call Ninf_perror(what)
    stop 1
  end subroutine check

end program async_test
