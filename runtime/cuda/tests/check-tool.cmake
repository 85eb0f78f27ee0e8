# Runs lpc-cuda-check and checks its exit code and output (cmake -P).
#   -DTOOL=<lpc-cuda-check> -DEXPECT=<mode> [-DDRIVER=<libcuda path>]
#   [-DPTXAS=<ptxas> -DWORKDIR=<dir>]
# Modes:
#   gpu-or-none  exit 0 with the device list, or exit 2 with one line saying
#                there is no NVIDIA driver / no CUDA device
#   no-driver    DRIVER does not exist: exit 2, exactly the no-driver line
#   stub         DRIVER is the toolkit's stub libcuda: exit 2, says so
#   fake         DRIVER is tests/FakeDriver.cpp: --driver-selftest passes
#   ptx          --print-test-ptx output assembles with `ptxas -arch=sm_90`
#   artifact     --artifact= accepts --print-test-artifact's artifact (exit 0,
#                summary) and rejects a broken copy (exit 1, the reason)

function(fail why)
  message(FATAL_ERROR "${why}\n--- exit code: ${rc}\n--- output:\n${out}")
endfunction()

if(DEFINED DRIVER)
  set(ENV{LPC_CUDA_DRIVER_LIBRARY} "${DRIVER}")
endif()

if(EXPECT STREQUAL "ptx")
  set(ptx "${WORKDIR}/lpc-test-kernel.ptx")
  execute_process(COMMAND ${TOOL} --print-test-ptx OUTPUT_FILE ${ptx} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("lpc-cuda-check --print-test-ptx failed")
  endif()
  execute_process(COMMAND ${PTXAS} -arch=sm_90 ${ptx} -o ${ptx}.cubin
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("ptxas -arch=sm_90 rejects the test kernel")
  endif()
  message(STATUS "ptxas -arch=sm_90 accepts the test kernel")
  return()
endif()

if(EXPECT STREQUAL "artifact")
  set(good "${WORKDIR}/lpc-test-artifact.json")
  set(bad "${WORKDIR}/lpc-test-artifact-bad.json")
  execute_process(COMMAND ${TOOL} --print-test-artifact OUTPUT_FILE ${good} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    fail("lpc-cuda-check --print-test-artifact failed")
  endif()
  execute_process(COMMAND ${TOOL} --artifact=${good}
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "valid lpc CUDA artifact v2 for sm_90"
     OR NOT out MATCHES "toy_step: 2 args \\(72 bytes\\), 5 results \\(180 bytes\\); 7 ops: 4 launches of 2 kernels in 2 modules, 2 GEMMs \\(2 x F32xF32->F32\\), 1 copies; arena 512 bytes in 2 buffers")
    fail("lpc-cuda-check --artifact does not accept and summarize the test artifact")
  endif()
  message(STATUS "${out}")
  file(READ ${good} text)
  string(REPLACE "\"arena_bytes\": 512" "\"arena_bytes\": 100" text "${text}")
  file(WRITE ${bad} "${text}")
  execute_process(COMMAND ${TOOL} --artifact=${bad}
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 1 OR NOT out MATCHES "function 'toy_step', buffer 1: bytes \\[256, 288\\) leave the arena of 100 bytes")
    fail("lpc-cuda-check --artifact does not reject a broken artifact with its reason")
  endif()
  message(STATUS "${out}")
  return()
endif()

if(EXPECT STREQUAL "fake")
  execute_process(COMMAND ${TOOL} --driver-selftest
                  OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "device 0: lpc fake GPU, compute capability 9.0"
     OR NOT out MATCHES "all checks passed")
    fail("the driver self-test on the fake driver did not pass")
  endif()
  message(STATUS "${out}")
  return()
endif()

execute_process(COMMAND ${TOOL} OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE rc)

if(EXPECT STREQUAL "gpu-or-none")
  if(rc EQUAL 0)
    if(NOT out MATCHES "NVIDIA driver: CUDA [0-9]+\\.[0-9]+" OR NOT out MATCHES "device 0: ")
      fail("exit 0 without the driver version and device list")
    endif()
    message(STATUS "GPU present:\n${out}")
  elseif(rc EQUAL 2)
    if(NOT out MATCHES "^lpc-cuda-check: no (NVIDIA driver|CUDA device): [^\n]*\n$")
      fail("exit 2 without exactly one 'lpc-cuda-check: no NVIDIA driver/CUDA device' line")
    endif()
    message(STATUS "no GPU, reported as: ${out}")
  else()
    fail("expected exit 0 (GPU) or 2 (no driver / no GPU)")
  endif()
elseif(EXPECT STREQUAL "no-driver")
  set(want "lpc-cuda-check: no NVIDIA driver: ${DRIVER} not found (this machine has no GPU driver)\n")
  if(NOT rc EQUAL 2 OR NOT out STREQUAL want)
    fail("expected exit 2 and exactly: ${want}")
  endif()
elseif(EXPECT STREQUAL "stub")
  if(NOT rc EQUAL 2 OR NOT out MATCHES "^lpc-cuda-check: no NVIDIA driver: .* is the CUDA toolkit's stub library")
    fail("expected exit 2 and the stub-library line")
  endif()
else()
  message(FATAL_ERROR "check-tool.cmake: unknown EXPECT '${EXPECT}'")
endif()
