// ErrorTests.cpp - tests of Error and Expected (group error).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// error
//===----------------------------------------------------------------------===//

TEST(error, basics) {
  Error ok;
  CHECK(!ok);
  CHECK(ok.ok());
  Error e = makeError("file.bin", "truncated");
  CHECK(static_cast<bool>(e));
  CHECK_EQ(e.message(), std::string("file.bin: truncated"));
  CHECK_EQ(e.withContext("loading").message(), std::string("loading: file.bin: truncated"));
  Expected<int> v = 3;
  CHECK(static_cast<bool>(v));
  CHECK_EQ(*v, 3);
  Expected<int> f = Error::make("nope");
  CHECK(!f);
  CHECK_EQ(f.error().message(), std::string("nope"));
  Expected<std::vector<int>> big = std::vector<int>{1, 2, 3};
  CHECK_EQ(big->size(), size_t(3));
  std::vector<int> moved = big.take();
  CHECK_EQ(moved.size(), size_t(3));
}
