// runTestInChild: runs one (disabled) test of this test binary again in a
// child process and waits for it with a timeout, for tests of how a process
// ends (exit with threads still running) whose failure is a crash or a hang
// of the whole process.
//
//   TEST(Child, DISABLED_Exits) { ... std::exit(7); }
//   TEST(Parent, ExitsCleanly) {
//     ChildResult r = runTestInChild("Child.DISABLED_Exits", "MODE", "exit",
//                                    std::chrono::seconds(20));
//     EXPECT_TRUE(r.exitedWith(7)) << r.describe();
//   }
#ifndef TURNOUT_TESTS_CHILD_PROCESS_H_
#define TURNOUT_TESTS_CHILD_PROCESS_H_

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace turnout {
namespace testing {

/// How a child ended.
struct ChildResult {
  bool spawned = false;
  bool hung = false;    // still running at the timeout (then killed)
  int exit_code = -1;   // when it exited
  int signal = 0;       // when a signal ended it

  bool exitedWith(int code) const {
    return spawned && !hung && signal == 0 && exit_code == code;
  }
  std::string describe() const {
    if (!spawned) return "the child could not be spawned";
    if (hung) return "the child hung (killed at the timeout)";
    if (signal != 0) {
      return "the child died of signal " + std::to_string(signal) + " (" +
             strsignal(signal) + ")";
    }
    return "the child exited with " + std::to_string(exit_code);
  }
};

/// Runs test `test_name` ("Suite.DISABLED_Name") of this binary in a child,
/// with `variable`=`value` in its environment (and without the test
/// runner's output files), and waits at most `timeout` for it.
inline ChildResult runTestInChild(const std::string& test_name,
                                  const std::string& variable,
                                  const std::string& value,
                                  std::chrono::milliseconds timeout) {
  std::string filter = "--gtest_filter=" + test_name;
  std::string also = "--gtest_also_run_disabled_tests";
  std::string exe = "/proc/self/exe";
  char* argv[] = {exe.data(), filter.data(), also.data(), nullptr};
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    // Not the test runner's files: the child would write or remove them.
    const std::string entry = *e;
    if (entry.rfind("TEST_PREMATURE_EXIT_FILE=", 0) == 0 ||
        entry.rfind("XML_OUTPUT_FILE=", 0) == 0 ||
        entry.rfind("GTEST_", 0) == 0 || entry.rfind("TEST_SHARD", 0) == 0) {
      continue;
    }
    env_strings.push_back(entry);
  }
  env_strings.push_back(variable + "=" + value);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  ChildResult result;
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()) !=
      0) {
    return result;
  }
  result.spawned = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
      return result;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.hung = true;
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace testing
}  // namespace turnout

#endif  // TURNOUT_TESTS_CHILD_PROCESS_H_
