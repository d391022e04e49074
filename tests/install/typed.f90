! typed.f90 - the install test's Fortran client of the installed typed
! module ninf_lapack (install_test.sh): a 3x3 system whose solution is
! (1, 2, 3), solved remotely by ninf_dgesv.
program typed
  use ninf, only: Ninf_perror
  use ninf_lapack, only: ninf_dgesv
  implicit none
  real(8) :: a(3, 3), b(3)
  integer :: ipiv(3), info
  a = reshape([4d0, 1d0, 2d0, 1d0, 5d0, 1d0, 2d0, 1d0, 6d0], [3, 3])
  b = matmul(a, [1d0, 2d0, 3d0])
  if (ninf_dgesv(3, 1, a, 3, ipiv, b, 3, info) /= 0) then
    call Ninf_perror('ninf_dgesv')
    stop 1
  end if
  if (info /= 0 .or. maxval(abs(b - [1d0, 2d0, 3d0])) > 1d-12) stop 2
  print '(a)', 'typed ok'
end program typed
