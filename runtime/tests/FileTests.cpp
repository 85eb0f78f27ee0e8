// FileTests.cpp - tests of atomic file writes and injected write faults (group atomic).

#include "TestHarness.h"

//===----------------------------------------------------------------------===//
// atomic
//===----------------------------------------------------------------------===//

TEST(atomic, faults_leave_old_file) {
  std::string path = tmp("ckpt.safetensors");
  std::map<std::string, Tensor> v1 = {{"w", Tensor::fromF32({2}, {1, 2})}};
  std::map<std::string, Tensor> v2 = {{"w", Tensor::fromF32({3}, {3, 4, 5})}};
  CHECK_OK(writeSafetensors(path, v1, {{"step", "1"}}));
  std::vector<uint8_t> before = readBytes(path);
  CHECK(!before.empty());
  using testing::WriteFault;
  for (WriteFault f : {WriteFault::Open, WriteFault::Write, WriteFault::Fsync, WriteFault::Rename}) {
    testing::injectWriteFault(f);
    Error e = writeSafetensors(path, v2, {{"step", "2"}});
    CHECK(static_cast<bool>(e));
    CHECK(e.message().find(path) != std::string::npos);
    CHECK(readBytes(path) == before);
    CHECK(tempFilesContaining(".tmp.").empty());
  }
  CHECK_ERR((testing::injectWriteFault(WriteFault::Rename), writeSafetensors(path, v2)),
            "cannot rename", ".tmp.", "Input/output error");
  // A real failure: the target is a directory, so rename() fails.
  std::string dir = tmp("is-a-dir");
  ::mkdir(dir.c_str(), 0755);
  CHECK_ERR(writeSafetensors(dir, v2), "cannot rename");
  struct stat st;
  CHECK(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
  CHECK(tempFilesContaining(".tmp.").empty());
  // Missing directory: nothing created.
  CHECK_ERR(writeSafetensors(tmp("no/such/dir/ckpt.safetensors"), v2),
            "cannot create temporary file", "No such file or directory");
  // Success after the faults replaces the file.
  CHECK_OK(writeSafetensors(path, v2, {{"step", "2"}}));
  Expected<SafetensorsFile> now = readSafetensors(path);
  CHECK(now && now->metadata.at("step") == "2" && now->tensors.at("w").shape[0] == 3);
}

TEST(atomic, read_only_directory) {
  if (::geteuid() == 0)
    SKIP("running as root: directory permissions do not stop root (the fault-injection "
         "test covers this path)");
  std::string dir = tmp("ro");
  ::mkdir(dir.c_str(), 0755);
  std::string path = dir + "/ckpt.safetensors";
  std::map<std::string, Tensor> v1 = {{"w", Tensor::fromF32({1}, {1})}};
  CHECK_OK(writeSafetensors(path, v1));
  std::vector<uint8_t> before = readBytes(path);
  ::chmod(dir.c_str(), 0555);
  CHECK_ERR(writeSafetensors(path, {{"w", Tensor::fromF32({2}, {1, 2})}}),
            "cannot create temporary file", "Permission denied");
  ::chmod(dir.c_str(), 0755);
  CHECK(readBytes(path) == before);
}

TEST(atomic, write_file) {
  std::string path = tmp("plain.txt");
  CHECK_OK(writeFileAtomic(path, "hello", 5));
  CHECK(readBytes(path) == std::vector<uint8_t>({'h', 'e', 'l', 'l', 'o'}));
  {
    AtomicFileWriter w;
    CHECK_OK(w.open(path));
    CHECK_OK(w.write("xyz", 3));
    CHECK(isRegularFile(w.tempPath()));
    // Destroyed without commit: the temp file goes, the old file stays.
  }
  CHECK(readBytes(path) == std::vector<uint8_t>({'h', 'e', 'l', 'l', 'o'}));
  CHECK(tempFilesContaining(".tmp.").empty());
}
