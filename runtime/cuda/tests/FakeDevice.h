//===- FakeDevice.h - the fake driver's device 0, for the CUDA tests -*- C++ -*-===//

#ifndef LPC_RUNTIME_CUDA_TESTS_FAKEDEVICE_H
#define LPC_RUNTIME_CUDA_TESTS_FAKEDEVICE_H

#include "TestHarness.h"

#include "lpc/Runtime/CudaDriver.h"

#include <memory>

namespace lpc {
namespace rt {
namespace cuda {

/// The fake driver (LPC_FAKE_CUDA_DRIVER) and its device 0 (the device is
/// null after a failed CHECK; the driver outlives it).
struct FakeDevice {
  std::unique_ptr<Driver> driver;
  std::unique_ptr<Device> device;
};

inline FakeDevice openFakeDevice() {
  FakeDevice f;
  Expected<std::unique_ptr<Driver>> d = Driver::load(LPC_FAKE_CUDA_DRIVER);
  CHECK_OK(d);
  if (!d)
    return f;
  f.driver = d.take();
  Expected<std::unique_ptr<Device>> dev = Device::open(*f.driver, 0);
  CHECK_OK(dev);
  if (dev)
    f.device = dev.take();
  return f;
}

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_TESTS_FAKEDEVICE_H
