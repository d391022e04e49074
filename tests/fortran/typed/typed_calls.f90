! Typed calls from Fortran: modules ninf_blas, ninf_lapack and ninf_ep_calls
! (the standard library's, compiled into libninf_fortran) and ninf_typed
! (ninf-gen --fortran over typed.idl, compiled with this program). The
! arguments are those of a local call: literals for IN scalars, default
! INTEGERs where the IDL says short or long.
program typed_calls
  use, intrinsic :: iso_c_binding, only: c_long, c_short
  use ninf, only: Ninf_perror, Ninf_wait
  use ninf_blas, only: ninf_dgemm
  use ninf_lapack, only: ninf_dgesv
  use ninf_ep_calls, only: ninf_ep, ninf_ep_async
  use ninf_typed, only: ninf_alltypes
  implicit none
  integer, parameter :: n = 40
  logical :: ok

  ! One statement each: Fortran may skip an operand of .and.
  ok = dgemm_exact()
  if (.not. dgesv_solves()) ok = .false.
  if (.not. ep_sync_and_async()) ok = .false.
  if (.not. alltypes()) ok = .false.
  if (.not. ok) stop 1
  print '(a)', 'typed Fortran calls ok'

contains

  logical function dgemm_exact()
    real(8) :: a(n, n), b(n, n), c(n, n)
    integer :: i, j
    do j = 1, n
      do i = 1, n
        a(i, j) = mod(i + 2 * j, 7) - 3
        b(i, j) = mod(3 * i + j, 5) * 0.5d0
      end do
    end do
    c = 1
    dgemm_exact = ninf_dgemm('N', 'N', n, n, n, 1d0, a, n, b, n, 0d0, c, n) == 0
    if (.not. dgemm_exact) call Ninf_perror('ninf_dgemm')
    if (dgemm_exact .and. any(c /= matmul(a, b))) then
      print '(a)', 'FAILED: dgemm: C differs from matmul(A, B)'
      dgemm_exact = .false.
    end if
  end function dgemm_exact

  logical function dgesv_solves()
    real(8) :: a(n, n), b(n)
    integer :: ipiv(n), info, i, j
    do j = 1, n
      do i = 1, n
        a(i, j) = 1d0 / (i + j - 1)
      end do
      a(j, j) = 2d0 * n
    end do
    b = matmul(a, [(real(i, 8), i = 1, n)])
    dgesv_solves = ninf_dgesv(n, 1, a, n, ipiv, b, n, info) == 0 .and. info == 0
    if (.not. dgesv_solves) call Ninf_perror('ninf_dgesv')
    if (dgesv_solves .and. maxval(abs(b - [(real(i, 8), i = 1, n)])) > 1d-9) then
      print '(a)', 'FAILED: dgesv: wrong solution'
      dgesv_solves = .false.
    end if
  end function dgesv_solves

  logical function ep_sync_and_async()
    real(8) :: sx, sy, q(10)
    real(8), asynchronous :: sx2, sy2, q2(10)
    integer :: id, waited
    ep_sync_and_async = ninf_ep(16, sx, sy, q) == 0
    if (.not. ep_sync_and_async) call Ninf_perror('ninf_ep')
    id = ninf_ep_async(16, sx2, sy2, q2)
    waited = -1
    if (id >= 0) waited = Ninf_wait(id)
    if (waited /= 0) then
      call Ninf_perror('ninf_ep_async')
      ep_sync_and_async = .false.
    else if (sx /= sx2 .or. sy /= sy2 .or. any(q /= q2)) then
      print '(a)', 'FAILED: ep: the async call differs'
      ep_sync_and_async = .false.
    end if
  end function ep_sync_and_async

  ! Every IDL type through one routine (typed.idl).
  logical function alltypes()
    integer(c_short) :: sa(2)
    integer :: ia(2)
    integer(c_long) :: la(2)
    real(4) :: fa(2)
    real(8) :: big_a(2), total
    complex(4) :: za(2)
    complex(8) :: wa(2)
    character(len=1) :: ca(4)
    sa = [1_c_short, -2_c_short]
    ia = [3, -4]
    la = [5_c_long, 2_c_long**40]
    fa = [0.5, -1.5]
    big_a = [2.25d0, -3d0]
    za = [(1.0, 2.0), (-3.0, 0.0)]
    wa = [(4d0, -5d0), (0d0, 0.5d0)]
    alltypes = ninf_alltypes('x', 2, 3, 4, 0.5, 0.25d0, (1.0, 1.0), (2d0, -3d0), 'Ninf', sa, ia, &
                             la, fa, big_a, za, wa, ca, 7, 8d0, 9, total) == 0
    if (.not. alltypes) then
      call Ninf_perror('ninf_alltypes')
      return
    end if
    if (total /= 158.75d0) then
      print '(a, f0.3)', 'FAILED: alltypes: wrong sum of the scalars: ', total
      alltypes = .false.
    end if
    if (sa(2) /= -4 .or. ia(2) /= -8 .or. la(2) /= 2_c_long**41 .or. fa(2) /= -3.0 .or. &
        big_a(1) /= 4.5d0 .or. za(1) /= (2.0, 4.0) .or. wa(2) /= (0d0, 1d0)) then
      print '(a)', 'FAILED: alltypes: an array was not doubled'
      alltypes = .false.
    end if
    if (any(ca /= ['N', 'i', 'n', 'f'])) then
      print '(a)', 'FAILED: alltypes: wrong characters'
      alltypes = .false.
    end if
  end function alltypes

end program typed_calls
