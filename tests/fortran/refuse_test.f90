! refuse_test.f90 - calls whose arguments do not match the interface are
! refused before anything is sent, with NINF_ERR_ARGUMENT_MISMATCH and a
! message naming the argument, and the caller's arrays stay untouched.
! Also what is accepted: a name with trailing blanks, scalars for pointer
! parameters, integers of other kinds, rank-1 arrays for higher ranks. Each refusal is printed through
! Ninf_perror (stderr); prints "ok" lines and exits 1 on the first failure.
program refuse_test
  use ninf
  use solve_check
  implicit none
  integer, parameter :: n = 4
  real(dp) :: a(n, n), b(n, 1), wide(2 * n, 1), a_copy(n, n)
  real(4) :: a4(n, n), sx4
  integer :: a_int(n, n), ipiv(n), info, ierr
  integer(2) :: ipiv2(n)
  integer(8) :: big
  real(dp) :: sx, sy, q(10), q_short(9)
  real(dp) :: a3(n, n, 1), a_flat(n * n), b1(n), b1_copy(n)
  character(len=16) :: name

  call random_number(a)
  call random_number(b)
  a_copy = a
  a3 = 0
  b1 = 0

  call refused(Ninf_call('dgesv', n, 1, a, n, ipiv, wide(1:2 * n:2, :), n, info), &
    "argument 6 'b': expected a contiguous rank-2 REAL(8) array, got a non-contiguous rank-2 REAL(8) array", &
    'a non-contiguous section')
  call refused(Ninf_call('dgesv', n, 1, a_int, n, ipiv, b, n, info), &
    "argument 3 'a': expected a contiguous rank-2 REAL(8) array, got a rank-2 INTEGER(4) array", &
    'an INTEGER array for a REAL(8) one')
  call refused(Ninf_call('dgesv', n, 1, a4, n, ipiv, b, n, info), &
    "argument 3 'a': expected a contiguous rank-2 REAL(8) array, got a rank-2 REAL(4) array", &
    'a REAL(4) array for a REAL(8) one')
  call refused(Ninf_call('dgesv', n, 1, a(:, 1), n, ipiv, b, n, info), &
    "argument 3 'a': the call moves 16 elements, the rank-1 actual argument has 4: declare it " // &
    "a(4,4), the interface's shape in Fortran order (a leading dimension such as ldb counts in full)", &
    'a too small rank-1 array for a rank-2 one')
  call refused(Ninf_call('dgesv', n, 1, a, n, ipiv, b1, 2 * n, info), &
    "argument 6 'b': the call moves 8 elements, the rank-1 actual argument has 4: declare it " // &
    "b(8,1), the interface's shape in Fortran order", &
    "an existing program's b(n) with ldb = 2n")
  call refused(Ninf_call('dgesv', n, 1, a3, n, ipiv, b, n, info), &
    "argument 3 'a': expected a contiguous rank-2 REAL(8) array, got a rank-3 REAL(8) array " // &
    "(a contiguous rank-1 array that holds all its elements is taken too)", &
    'a rank-3 array for a rank-2 one')
  call refused(Ninf_call('dgesv', n, 1, a(:, 1:n - 1), n, ipiv, b, n, info), &
    "argument 3 'a': the call moves 16 elements, the actual argument has 12", 'a too small array')
  call refused(Ninf_call('dgesv', n, 1, a, n, ipiv, b, n), &
    "'dgesv' takes 8 arguments (n, nrhs, a, lda, ipiv, b, ldb, info), got 7", 'a missing argument')
  call refused(Ninf_call('dgesv', n, 1, a, n, ipiv, b, n, info, info), &
    "'dgesv' takes 8 arguments (n, nrhs, a, lda, ipiv, b, ldb, info), got 9", 'an extra argument')
  big = 2_8**40
  call refused(Ninf_call('dgesv', big, 1, a, n, ipiv, b, n, info), &
    "argument 1 'n': value 1099511627776 does not fit the IDL type int", 'an IN integer out of range')
  call refused(Ninf_call('dgesv', 4.0_dp, 1, a, n, ipiv, b, n, info), &
    "argument 1 'n': expected an INTEGER scalar, got a REAL(8) scalar", 'a REAL for an IN int')
  call refused(Ninf_call('ep', 10, sx4, sy, q), &
    "argument 2 'sx': expected a contiguous rank-1 REAL(8) array (or a scalar), got a REAL(4) scalar", &
    'a REAL(4) scalar for OUT double *sx')
  call refused(Ninf_call('ep', 10, sx, sy, q_short), &
    "argument 4 'q': the call moves 10 elements, the actual argument has 9", 'a too short OUT array')
  call check(maxval(abs(a - a_copy)) <= 0, 'refused calls left the arrays untouched')

  ! Accepted: trailing blanks in the name, INTEGER(2) pivots (converted).
  ! (Each call is a statement of its own: Fortran may evaluate the operands
  ! of .and. in any order, so a check must not read what the call writes.)
  name = 'dgesv'
  ierr = Ninf_call(name, n, 1, a, n, ipiv2, b, n, info)
  call check(ierr == 0 .and. info == 0, 'a blank-padded name and INTEGER(2) pivots')
  call check(all(ipiv2 >= 1 .and. ipiv2 <= n), 'INTEGER(2) pivots copied back')
  q = 0
  ierr = Ninf_call('ep', 10_8, sx, sy, q)
  call check(ierr == 0 .and. sum(q) > 0, 'ep with INTEGER(8) m')

  ! Accepted: an existing program's b(n) for the IDL's b[nrhs][ldb] (and
  ! a rank-1 a(n*n) for a[n][lda]), as Python takes flat arrays.
  call random_number(a)
  a_copy = a
  call random_number(b1)
  b1_copy = b1
  ierr = Ninf_call('dgesv', n, 1, a, n, ipiv, b1, n, info)
  call check(ierr == 0 .and. info == 0, "a rank-1 b(n) for b[nrhs][ldb]")
  call check(residual_ok(a_copy, reshape(b1_copy, [n, 1]), reshape(b1, [n, 1])), &
             'the rank-1 b holds the solution')
  a_flat = reshape(a_copy, [n * n])
  b1 = b1_copy
  ierr = Ninf_call('dgesv', n, 1, a_flat, n, ipiv, b1, n, info)
  call check(ierr == 0 .and. info == 0, 'a rank-1 expression for a[n][lda]')
  call check(residual_ok(a_copy, reshape(b1_copy, [n, 1]), reshape(b1, [n, 1])), &
             'solved from a rank-1 a')

contains

  ! Checks that a call failed with NINF_ERR_ARGUMENT_MISMATCH and `message`.
  subroutine refused(ierr, message, what)
    integer, intent(in) :: ierr
    character(*), intent(in) :: message, what
    integer :: code
    logical :: named
    call Ninf_perror(what)
    code = Ninf_get_error()
    named = index(Ninf_error_detail(), message) > 0
    call check(ierr == -1 .and. code == NINF_ERR_ARGUMENT_MISMATCH .and. named, 'refused: ' // what)
  end subroutine refused

  subroutine check(condition, what)
    logical, intent(in) :: condition
    character(*), intent(in) :: what
    if (condition) then
      print '(2a)', 'ok: ', what
      return
    end if
    print '(4a)', 'FAILED: ', what, ': ', Ninf_error_detail()
    stop 1
  end subroutine check

end program refuse_test
