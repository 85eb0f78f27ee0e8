# lpc-fake-nccl: a stand-in libnccl on the fake CUDA driver (tests only;
# tests/FakeNccl.cpp says what it does). Included from
# runtime/cuda/CMakeLists.txt, so paths are relative to runtime/cuda.
#
# It needs nccl.h (the CUDA toolkit ships it; where it does not, there is no
# target: check `if(TARGET lpc-fake-nccl)`). With the MPI LpcComm found
# (global property LPC_HAVE_MPI, set by runtime/comm) communicators of
# several ranks run over MPI_COMM_WORLD, under mpirun; without it the fake
# refuses more than one rank. Tests load it with dlopen, with
# $LPC_CUDA_DRIVER_LIBRARY naming lpc-fake-cuda.
find_path(LPC_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(NOT LPC_NCCL_INCLUDE_DIR)
  message(STATUS "lpc: no nccl.h: no fake libnccl (lpc-fake-nccl) for the tests")
  return()
endif()

add_library(lpc-fake-nccl MODULE tests/FakeNccl.cpp)
target_include_directories(lpc-fake-nccl PRIVATE ${LPC_CUDA_ROOT}/include)
target_include_directories(lpc-fake-nccl SYSTEM PRIVATE
  ${CUDAToolkit_INCLUDE_DIRS} ${LPC_NCCL_INCLUDE_DIR})
target_compile_features(lpc-fake-nccl PRIVATE cxx_std_17)
target_compile_options(lpc-fake-nccl PRIVATE -Wall -Wextra -fno-exceptions)
target_link_libraries(lpc-fake-nccl PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(lpc-fake-nccl PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} CXX_VISIBILITY_PRESET hidden)

get_property(LPC_FAKE_NCCL_MPI GLOBAL PROPERTY LPC_HAVE_MPI)
if(LPC_FAKE_NCCL_MPI)
  # runtime/comm's find_package(MPI) targets are local to its directory.
  if(NOT TARGET MPI::MPI_C)
    find_package(MPI COMPONENTS C QUIET)
  endif()
endif()
if(LPC_FAKE_NCCL_MPI AND TARGET MPI::MPI_C)
  target_link_libraries(lpc-fake-nccl PRIVATE MPI::MPI_C)
  target_compile_definitions(lpc-fake-nccl PRIVATE LPC_FAKE_NCCL_HAVE_MPI)
else()
  message(STATUS "lpc: the fake libnccl (lpc-fake-nccl) runs one rank only (no MPI)")
endif()
