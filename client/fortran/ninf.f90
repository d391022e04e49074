! ninf.f90 - module ninf: the Ninf client API and the OGF GridRPC API for
! Fortran programs.
!
!   use ninf
!   integer :: ierr, info, ipiv(n)
!   ierr = Ninf_call('dgesv', n, nrhs, a, lda, ipiv, b, ldb, info)
!   if (ierr /= 0) call Ninf_perror('dgesv')
!
! A remote routine takes exactly the arguments of the local call, in the
! order of its IDL. Every argument reaches the C half (ninf_fortran.c) with
! its type, kind, rank and shape, and is checked against the routine's
! interface, which libninf fetches from the server: integers of another
! kind are converted (with a range check), while a real of another kind, a
! wrong rank, a non-contiguous section, an array smaller than the call
! moves, or a missing or extra argument refuse the call with a message
! naming the argument (Ninf_perror, Ninf_error_detail). Up to 30 arguments.
!
! Asynchronous calls: the arguments must stay in place and untouched until
! the call has been waited for; give them the ASYNCHRONOUS attribute.
! Integers that are session ids may be of kind 4 or 8 (-fdefault-integer-8).
! The documentation is docs/fortran.md.
module ninf
  use, intrinsic :: iso_c_binding, only: c_associated, c_char, c_f_pointer, c_int, c_int64_t, &
                                         c_null_char, c_null_ptr, c_ptr, c_size_t
  implicit none
  private

  ! NINF_* and GRPC_* codes, generated from the C headers' error lists.
  include 'ninf_codes.inc'

  ! grpc_function_handle_t of grpc.h: the library owns the fields.
  type, bind(C), public :: grpc_function_handle
    type(c_ptr) :: impl = c_null_ptr
    integer(c_int) :: magic = 0
  end type grpc_function_handle

  public :: Ninf_call, Ninf_call_async, Ninf_wait, Ninf_wait_all, Ninf_wait_any
  public :: Ninf_call_submit, Ninf_call_collect
  public :: Ninf_transaction_begin, Ninf_transaction_end, Ninf_transaction_discard
  public :: Ninf_transaction_calls, Ninf_transaction_call_error
  public :: Ninf_perror, Ninf_get_error, Ninf_error_detail, Ninf_error_string
  public :: grpc_initialize, grpc_finalize, grpc_function_handle_default
  public :: grpc_function_handle_init, grpc_function_handle_destruct, grpc_call, grpc_call_async
  public :: grpc_wait, grpc_wait_all, grpc_wait_any, grpc_probe, grpc_cancel, grpc_get_error
  public :: grpc_error_string

  ! The calls: assumed-type, assumed-rank optional arguments, so that any
  ! variable, array or literal may be passed and the C half sees what it is.
  ! No INTENT: literals are allowed, and OUT arguments are written.
  interface
    function Ninf_call(name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, &
                       a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30) &
        result(ierr) bind(C, name='ninf__fortran_call')
      import :: c_char, c_int
      character(kind=c_char, len=*), intent(in) :: name
      ! ASYNCHRONOUS: inside a transaction block the call runs at
      ! Ninf_transaction_end, after this one has returned.
      type(*), dimension(..), optional, asynchronous :: a1, a2, a3, a4, a5, a6, a7, a8, a9, &
          a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, &
          a27, a28, a29, a30
      integer(c_int) :: ierr
    end function Ninf_call

    ! Returns the call's id (>= 0), or -1 when it could not start.
    function Ninf_call_async(name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, &
                             a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, &
                             a28, a29, a30) result(id) bind(C, name='ninf__fortran_call_async')
      import :: c_char, c_int
      character(kind=c_char, len=*), intent(in) :: name
      type(*), dimension(..), optional, asynchronous :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
          a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, &
          a28, a29, a30
      integer(c_int) :: id
    end function Ninf_call_async

    ! Two-phase calls: the ticket (CHARACTER(len=256)) names the result,
    ! which Ninf_call_collect fetches later, in this or another program.
    function Ninf_call_submit(ticket, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, &
                              a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, &
                              a26, a27, a28, a29, a30) result(ierr) &
        bind(C, name='ninf__fortran_call_submit')
      import :: c_char, c_int
      character(kind=c_char, len=*) :: ticket
      character(kind=c_char, len=*), intent(in) :: name
      type(*), dimension(..), optional :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, &
          a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30
      integer(c_int) :: ierr
    end function Ninf_call_submit

    function Ninf_call_collect(ticket, name, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, &
                               a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, &
                               a26, a27, a28, a29, a30) result(ierr) &
        bind(C, name='ninf__fortran_call_collect')
      import :: c_char, c_int
      character(kind=c_char, len=*), intent(in) :: ticket
      character(kind=c_char, len=*), intent(in) :: name
      type(*), dimension(..), optional :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, &
          a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30
      integer(c_int) :: ierr
    end function Ninf_call_collect

    function grpc_call(handle, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, &
                       a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30) &
        result(ierr) bind(C, name='ninf__fortran_grpc_call')
      import :: c_int, grpc_function_handle
      type(grpc_function_handle) :: handle
      type(*), dimension(..), optional :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, &
          a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30
      integer(c_int) :: ierr
    end function grpc_call

    ! session_id: an INTEGER variable of kind 4 or 8, set to the call's id.
    function grpc_call_async(handle, session_id, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, &
                             a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, &
                             a25, a26, a27, a28, a29, a30) &
        result(ierr) bind(C, name='ninf__fortran_grpc_call_async')
      import :: c_int, grpc_function_handle
      type(grpc_function_handle) :: handle
      type(*), dimension(..) :: session_id
      type(*), dimension(..), optional, asynchronous :: a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, &
          a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, &
          a28, a29, a30
      integer(c_int) :: ierr
    end function grpc_call_async

    integer(c_int) function Ninf_wait_all() bind(C, name='ninf__fortran_wait_all')
      import :: c_int
    end function Ninf_wait_all

    integer(c_int) function grpc_wait_all() bind(C, name='ninf__fortran_grpc_wait_all')
      import :: c_int
    end function grpc_wait_all

    integer(c_int) function grpc_finalize() bind(C, name='ninf__fortran_grpc_finalize')
      import :: c_int
    end function grpc_finalize

    ! This thread's last error code (NINF_* codes).
    integer(c_int) function Ninf_get_error() bind(C, name='ninf__fortran_get_error')
      import :: c_int
    end function Ninf_get_error

    ! Transaction blocks (docs/transactions.md): between begin and end,
    ! Ninf_call records its call and returns 0 at once; end runs the block
    ! as a dataflow graph and returns 0, or -1 with the first failed call's
    ! error (the arrays are then as they were before the block). Declare
    ! the block's arrays and OUT scalars ASYNCHRONOUS, as for
    ! Ninf_call_async: the compiler must not keep them in registers
    ! across Ninf_transaction_end.
    integer(c_int) function Ninf_transaction_begin() bind(C, name='ninf__fortran_transaction_begin')
      import :: c_int
    end function Ninf_transaction_begin
    integer(c_int) function Ninf_transaction_end() bind(C, name='ninf__fortran_transaction_end')
      import :: c_int
    end function Ninf_transaction_end
    ! The recorded array `a` is an intermediate: not written back at end.
    integer(c_int) function Ninf_transaction_discard(a) &
        bind(C, name='ninf__fortran_transaction_discard')
      import :: c_int
      type(*), dimension(..), asynchronous :: a
    end function Ninf_transaction_discard
    ! Calls in this thread's last block (-1: none), and the error code of
    ! call i (1-based; NINF_ERR_CANCELLED: not run because another failed).
    integer(c_int) function Ninf_transaction_calls() bind(C, name='Ninf_transaction_calls')
      import :: c_int
    end function Ninf_transaction_calls
    integer(c_int) function Ninf_transaction_call_error(i) &
        bind(C, name='ninf__fortran_transaction_call_error')
      import :: c_int
      integer(c_int), value :: i
    end function Ninf_transaction_call_error
  end interface

  ! Ids of kind 4 or 8 alike.
  interface Ninf_wait
    module procedure wait_4, wait_8
  end interface Ninf_wait
  interface Ninf_wait_any
    module procedure wait_any_4, wait_any_8
  end interface Ninf_wait_any
  interface grpc_wait
    module procedure grpc_wait_4, grpc_wait_8
  end interface grpc_wait
  interface grpc_wait_any
    module procedure grpc_wait_any_4, grpc_wait_any_8
  end interface grpc_wait_any
  interface grpc_probe
    module procedure grpc_probe_4, grpc_probe_8
  end interface grpc_probe
  interface grpc_cancel
    module procedure grpc_cancel_4, grpc_cancel_8
  end interface grpc_cancel
  interface grpc_get_error
    module procedure grpc_get_error_4, grpc_get_error_8
  end interface grpc_get_error
  interface grpc_error_string
    module procedure grpc_error_string_4, grpc_error_string_8
  end interface grpc_error_string
  interface Ninf_error_string
    module procedure ninf_error_string_4, ninf_error_string_8
  end interface Ninf_error_string

  ! The C functions behind the procedures below (libninf, ninf_fortran.c).
  interface
    subroutine clear_error() bind(C, name='ninf__fortran_clear_error')
    end subroutine clear_error
    integer(c_int) function c_wait(id) bind(C, name='ninf__fortran_wait')
      import :: c_int
      integer(c_int), value :: id
    end function c_wait
    integer(c_int) function c_wait_any(id) bind(C, name='ninf__fortran_wait_any')
      import :: c_int
      integer(c_int), intent(out) :: id
    end function c_wait_any
    integer(c_int) function c_grpc_wait(id) bind(C, name='ninf__fortran_grpc_wait')
      import :: c_int
      integer(c_int), value :: id
    end function c_grpc_wait
    integer(c_int) function c_grpc_wait_any(id) bind(C, name='ninf__fortran_grpc_wait_any')
      import :: c_int
      integer(c_int), intent(out) :: id
    end function c_grpc_wait_any
    subroutine c_perror(msg) bind(C, name='ninf__fortran_perror')
      import :: c_char
      character(kind=c_char), intent(in) :: msg(*)
    end subroutine c_perror
    type(c_ptr) function c_error_detail() bind(C, name='ninf__fortran_error_detail')
      import :: c_ptr
    end function c_error_detail
    type(c_ptr) function c_ninf_error_string(code) bind(C, name='Ninf_error_string')
      import :: c_int, c_ptr
      integer(c_int), value :: code
    end function c_ninf_error_string
    ! An absent OPTIONAL argument reaches C as NULL.
    integer(c_int) function c_grpc_initialize(config) bind(C, name='grpc_initialize')
      import :: c_char, c_int
      character(kind=c_char), intent(in), optional :: config(*)
    end function c_grpc_initialize
    integer(c_int) function c_handle_default(handle, name) &
        bind(C, name='grpc_function_handle_default')
      import :: c_char, c_int, grpc_function_handle
      type(grpc_function_handle) :: handle
      character(kind=c_char), intent(in) :: name(*)
    end function c_handle_default
    integer(c_int) function c_handle_init(handle, server, name) &
        bind(C, name='grpc_function_handle_init')
      import :: c_char, c_int, grpc_function_handle
      type(grpc_function_handle) :: handle
      character(kind=c_char), intent(in) :: server(*), name(*)
    end function c_handle_init
    integer(c_int) function c_handle_destruct(handle) bind(C, name='grpc_function_handle_destruct')
      import :: c_int, grpc_function_handle
      type(grpc_function_handle) :: handle
    end function c_handle_destruct
    integer(c_int) function c_grpc_probe(id) bind(C, name='grpc_probe')
      import :: c_int
      integer(c_int), value :: id
    end function c_grpc_probe
    integer(c_int) function c_grpc_cancel(id) bind(C, name='grpc_cancel')
      import :: c_int
      integer(c_int), value :: id
    end function c_grpc_cancel
    integer(c_int) function c_grpc_get_error(id) bind(C, name='grpc_get_error')
      import :: c_int
      integer(c_int), value :: id
    end function c_grpc_get_error
    type(c_ptr) function c_grpc_error_string(code) bind(C, name='grpc_error_string')
      import :: c_int, c_ptr
      integer(c_int), value :: code
    end function c_grpc_error_string
    integer(c_size_t) function c_strlen(s) bind(C, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
    end function c_strlen
  end interface

contains

  ! --- Strings between Fortran and C -----------------------------------------

  ! s without trailing blanks, NUL-terminated for C.
  pure function c_string(s) result(r)
    character(*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: r
    r = trim(s) // c_null_char
  end function c_string

  ! A copy of the C string at p ('' for NULL).
  function f_string(p) result(r)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: r
    character(kind=c_char), pointer :: chars(:)
    integer :: i
    if (.not. c_associated(p)) then
      r = ''
      return
    end if
    call c_f_pointer(p, chars, [c_strlen(p)])
    allocate (character(len=size(chars)) :: r)
    do i = 1, size(chars)
      r(i:i) = chars(i)
    end do
  end function f_string

  ! An id of kind 8 as C's int: one that does not fit is no valid id, and -1
  ! makes the library report it as such.
  pure integer(c_int) function id_4(id)
    integer(c_int64_t), intent(in) :: id
    id_4 = -1_c_int
    if (id >= -huge(0_c_int) .and. id <= huge(0_c_int)) id_4 = int(id, c_int)
  end function id_4

  ! --- Ninf API -----------------------------------------------------------------

  integer(c_int) function wait_4(id)
    integer(c_int), intent(in) :: id
    wait_4 = c_wait(id)
  end function wait_4

  integer(c_int) function wait_8(id)
    integer(c_int64_t), intent(in) :: id
    wait_8 = c_wait(id_4(id))
  end function wait_8

  ! Waits for whichever call ends first; id receives its id (-1: none left).
  integer(c_int) function wait_any_4(id)
    integer(c_int), intent(out) :: id
    wait_any_4 = c_wait_any(id)
  end function wait_any_4

  integer(c_int) function wait_any_8(id)
    integer(c_int64_t), intent(out) :: id
    integer(c_int) :: id4
    wait_any_8 = c_wait_any(id4)
    id = id4
  end function wait_any_8

  ! Prints "msg: <error>: <detail>" for this thread's last error on stderr.
  subroutine Ninf_perror(msg)
    character(*), intent(in), optional :: msg
    if (present(msg)) then
      call c_perror(c_string(msg))
    else
      call c_perror(c_null_char)
    end if
  end subroutine Ninf_perror

  ! The detail of this thread's last error ('' if none), e.g.
  ! "argument 3 'a': expected a contiguous rank-2 REAL(8) array, got ...".
  function Ninf_error_detail() result(detail)
    character(len=:), allocatable :: detail
    detail = f_string(c_error_detail())
  end function Ninf_error_detail

  function ninf_error_string_4(code) result(text)
    integer(c_int), intent(in) :: code
    character(len=:), allocatable :: text
    text = f_string(c_ninf_error_string(code))
  end function ninf_error_string_4

  function ninf_error_string_8(code) result(text)
    integer(c_int64_t), intent(in) :: code
    character(len=:), allocatable :: text
    text = f_string(c_ninf_error_string(id_4(code)))
  end function ninf_error_string_8

  ! --- GridRPC API ------------------------------------------------------------

  ! A blank or absent config_file: the default server is NINF_SERVER.
  integer(c_int) function grpc_initialize(config_file)
    character(*), intent(in), optional :: config_file
    call clear_error()
    if (present(config_file)) then
      if (len_trim(config_file) > 0) then
        grpc_initialize = c_grpc_initialize(c_string(config_file))
        return
      end if
    end if
    grpc_initialize = c_grpc_initialize()
  end function grpc_initialize

  integer(c_int) function grpc_function_handle_default(handle, func_name)
    type(grpc_function_handle), intent(inout) :: handle
    character(*), intent(in) :: func_name
    call clear_error()
    grpc_function_handle_default = c_handle_default(handle, c_string(func_name))
  end function grpc_function_handle_default

  ! server: "host", "host:port", "[v6addr]:port", or a name from the config.
  integer(c_int) function grpc_function_handle_init(handle, server, func_name)
    type(grpc_function_handle), intent(inout) :: handle
    character(*), intent(in) :: server, func_name
    call clear_error()
    grpc_function_handle_init = c_handle_init(handle, c_string(server), c_string(func_name))
  end function grpc_function_handle_init

  integer(c_int) function grpc_function_handle_destruct(handle)
    type(grpc_function_handle), intent(inout) :: handle
    call clear_error()
    grpc_function_handle_destruct = c_handle_destruct(handle)
  end function grpc_function_handle_destruct

  integer(c_int) function grpc_wait_4(id)
    integer(c_int), intent(in) :: id
    grpc_wait_4 = c_grpc_wait(id)
  end function grpc_wait_4

  integer(c_int) function grpc_wait_8(id)
    integer(c_int64_t), intent(in) :: id
    grpc_wait_8 = c_grpc_wait(id_4(id))
  end function grpc_wait_8

  integer(c_int) function grpc_wait_any_4(id)
    integer(c_int), intent(out) :: id
    grpc_wait_any_4 = c_grpc_wait_any(id)
  end function grpc_wait_any_4

  integer(c_int) function grpc_wait_any_8(id)
    integer(c_int64_t), intent(out) :: id
    integer(c_int) :: id4
    grpc_wait_any_8 = c_grpc_wait_any(id4)
    id = id4
  end function grpc_wait_any_8

  ! GRPC_NO_ERROR when the call has ended, GRPC_NOT_COMPLETED while it runs.
  integer(c_int) function grpc_probe_4(id)
    integer(c_int), intent(in) :: id
    call clear_error()
    grpc_probe_4 = c_grpc_probe(id)
  end function grpc_probe_4

  integer(c_int) function grpc_probe_8(id)
    integer(c_int64_t), intent(in) :: id
    grpc_probe_8 = grpc_probe_4(id_4(id))
  end function grpc_probe_8

  integer(c_int) function grpc_cancel_4(id)
    integer(c_int), intent(in) :: id
    call clear_error()
    grpc_cancel_4 = c_grpc_cancel(id)
  end function grpc_cancel_4

  integer(c_int) function grpc_cancel_8(id)
    integer(c_int64_t), intent(in) :: id
    grpc_cancel_8 = grpc_cancel_4(id_4(id))
  end function grpc_cancel_8

  integer(c_int) function grpc_get_error_4(id)
    integer(c_int), intent(in) :: id
    call clear_error()
    grpc_get_error_4 = c_grpc_get_error(id)
  end function grpc_get_error_4

  integer(c_int) function grpc_get_error_8(id)
    integer(c_int64_t), intent(in) :: id
    grpc_get_error_8 = grpc_get_error_4(id_4(id))
  end function grpc_get_error_8

  function grpc_error_string_4(code) result(text)
    integer(c_int), intent(in) :: code
    character(len=:), allocatable :: text
    text = f_string(c_grpc_error_string(code))
  end function grpc_error_string_4

  function grpc_error_string_8(code) result(text)
    integer(c_int64_t), intent(in) :: code
    character(len=:), allocatable :: text
    text = f_string(c_grpc_error_string(id_4(code)))
  end function grpc_error_string_8

end module ninf
