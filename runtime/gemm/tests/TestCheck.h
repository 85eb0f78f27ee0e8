//===- TestCheck.h - what the runtime's C++ tests share ---------*- C++ -*-===//
//
// CHECK(cond, fmt, ...) counts a check and, when cond is false, a failure
// (the first 30 printed with their file and line); each test's main prints
// `checks` and `failures` and fails when any failed. expectAbort runs an
// invalid call in a child process: it must abort with one line on stderr
// that names the entry point and contains the expected fault.
//
//===----------------------------------------------------------------------===//
#ifndef LPC_RUNTIME_GEMM_TESTS_TESTCHECK_H
#define LPC_RUNTIME_GEMM_TESTS_TESTCHECK_H

#include <algorithm>
#include <cstdio>
#include <string>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures = 0;
static int checks = 0;

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    ++checks;                                                                  \
    if (!(cond)) {                                                             \
      ++failures;                                                              \
      if (failures <= 30) {                                                    \
        std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);   \
        std::fprintf(stderr, __VA_ARGS__);                                     \
        std::fprintf(stderr, "\n");                                            \
      }                                                                        \
    }                                                                          \
  } while (0)

/// Runs `fn` in a child, which must abort (checked); returns what it wrote
/// to stderr.
template <typename Fn> std::string abortMessage(const char *expect, Fn fn) {
  int pipefd[2];
  if (pipe(pipefd) != 0) {
    CHECK(false, "pipe");
    return "";
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    fn();
    _exit(0); // returned: not aborted
  }
  close(pipefd[1]);
  std::string err;
  char chunk[512];
  ssize_t n;
  while ((n = read(pipefd[0], chunk, sizeof chunk)) > 0)
    err.append(chunk, static_cast<size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
        "expected an abort for \"%s\"", expect);
  return err;
}

/// Runs `fn` in a child; it must abort with one line on stderr that names
/// the entry point and contains `expect`.
template <typename Fn>
void expectAbort(const char *entry, const char *expect, Fn fn) {
  const std::string err = abortMessage(expect, fn);
  const std::string prefix = std::string("lpc runtime: ") + entry + ": ";
  CHECK(err.rfind(prefix, 0) == 0 && err.find(expect) != std::string::npos &&
            std::count(err.begin(), err.end(), '\n') == 1,
        "abort message lacks \"%s%s\" or is not one line:\n%s",
        prefix.c_str(), expect, err.c_str());
}

#endif // LPC_RUNTIME_GEMM_TESTS_TESTCHECK_H
