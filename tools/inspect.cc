// inspect: the dispatcher's registry from the command line.
//
//   bazel run //tools:inspect -- ops add              # operators matching
//   "add" bazel run //tools:inspect -- table aten::add.Tensor bazel run
//   //tools:inspect -- --load $PWD/libmyops.so snapshot -o after.json bazel run
//   //tools:inspect -- diff before.json after.json
//
// The binary links the reference operators (aten::), so they are always
// there; `--load lib.so` (repeatable) dlopens a shared library of the user's
// operators first: its TURNOUT_LIBRARY blocks register into this process's
// dispatcher (build it against //dispatcher:headers_for_plugins, not
// //dispatcher, so that it binds to this process's registry).
//
// Relative paths are taken from the directory `bazel run` was started in.
// Exit status: 0 on success, 1 when the command fails (an unknown operator,
// an unreadable file), 2 on a usage error.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/core/error.h"
#include "dispatcher/debug/registry_snapshot.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/schema/schema_parser.h"

namespace turnout {
namespace {

constexpr const char* kUsage =
    "usage: inspect [--load LIB.so]... COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  ops [FILTER]          operators (with a schema) whose name contains "
    "FILTER\n"
    "  schema OP             the schema of OP (e.g. aten::add.Tensor)\n"
    "  dump OP               OP's registrations per key (c10's dumpState)\n"
    "  table OP              what each runtime key of OP runs, and why\n"
    "  keys                  every dispatch key, its kind and its fallback\n"
    "  registrations KEY     operators with a kernel registered for KEY\n"
    "  snapshot [-o FILE]    the whole registry as JSON (stdout or FILE)\n"
    "  diff A B              what changed from snapshot A to snapshot B\n"
    "\n"
    "options:\n"
    "  --load LIB.so         dlopen a shared library of operators first\n"
    "  -h, --help            this text\n";

struct UsageError {
  std::string message;
};

// `path` relative to where `bazel run` was started (it runs us elsewhere).
std::string resolvePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (wd == nullptr || *wd == '\0') return path;
  return std::string(wd) + "/" + path;
}

void loadLibrary(const std::string& path) {
  const std::string full = resolvePath(path);
  // RTLD_GLOBAL: a library may rely on another loaded before it.
  void* handle = dlopen(full.c_str(), RTLD_NOW | RTLD_GLOBAL);
  TURNOUT_CHECK(
      handle != nullptr, ErrorKind::InvalidArgument, "--load ", path,
      ": could not load the library: ", dlerror(),
      ". Give the path of a shared library (cc_binary with "
      "linkshared = 1) built against //dispatcher:headers_for_plugins");
  // Never dlclose: its registrations and kernels must outlive the command.
}

std::string readFile(const std::string& path) {
  const std::string full = resolvePath(path);
  std::ifstream in(full, std::ios::binary);
  TURNOUT_CHECK(in.good(), ErrorKind::InvalidArgument, "cannot read '", path,
                "' (", full, "); write a snapshot with `inspect snapshot -o ",
                path, "`");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The operator called `name`; an error listing near names otherwise.
OperatorHandle findOperator(const std::string& name) {
  Dispatcher& d = Dispatcher::singleton();
  std::optional<OperatorHandle> op = d.findOp(parseName(name));
  if (op) return *op;
  // Near names: the same base name (other overloads), or containing it.
  std::string base = name.substr(0, name.find('.'));
  std::string bare = base.substr(
      base.find("::") == std::string::npos ? 0 : base.find("::") + 2);
  std::string near;
  int shown = 0;
  for (const OperatorName& n : d.getAllOpNames()) {
    const std::string s = toString(n);
    if (n.name == base ||
        (!bare.empty() && s.find(bare) != std::string::npos)) {
      if (shown++ < 10) near += "\n  " + s;
    }
  }
  TURNOUT_CHECK(false, ErrorKind::InvalidArgument, "no operator named '", name,
                "' is registered (no def and no kernel).",
                near.empty() ? std::string(" List them with `inspect ops`.")
                             : " Did you mean:" + near);
  return *op;
}

const char* keyCategory(DispatchKey k) {
  if (k == DispatchKey::Undefined) return "undefined";
  if (isAliasDispatchKey(k)) return "alias";
  if (isPerBackendFunctionalityKey(k)) return "per-backend functionality";
  if (isRuntimePerBackendKey(k)) return "runtime (per backend)";
  return "runtime";
}

int cmdOps(const std::vector<std::string>& args) {
  if (args.size() > 1) throw UsageError{"ops takes at most one FILTER"};
  const std::string filter = args.empty() ? "" : args[0];
  Dispatcher& d = Dispatcher::singleton();
  for (const OperatorName& n : d.getAllOpNames()) {
    const std::string s = toString(n);
    if (s.find(filter) != std::string::npos) std::cout << s << "\n";
  }
  for (const OperatorHandle& h : d.findDanglingImpls()) {
    const std::string s = toString(h.operator_name());
    if (s.find(filter) != std::string::npos) {
      std::cout << s << "  (kernels only, no schema)\n";
    }
  }
  return 0;
}

int cmdOpCommand(const std::string& cmd, const std::vector<std::string>& args) {
  if (args.size() != 1)
    throw UsageError{cmd + " takes one OP, e.g. aten::add.Tensor"};
  OperatorHandle op = findOperator(args[0]);
  if (cmd == "schema") {
    TURNOUT_CHECK(op.hasSchema(), ErrorKind::InvalidArgument, "'", args[0],
                  "' has kernels but no schema (no def registered); see "
                  "`inspect dump ",
                  args[0], "`");
    std::cout << toString(op.schema()) << "\n";
  } else if (cmd == "dump") {
    std::cout << op.dumpState();
  } else {
    std::cout << op.dumpComputedTable();
  }
  return 0;
}

int cmdKeys(const std::vector<std::string>& args) {
  if (!args.empty()) throw UsageError{"keys takes no arguments"};
  std::map<std::string, std::string> fallbacks;
  for (const KernelRecord& f : takeRegistrySnapshot().fallbacks) {
    fallbacks[f.key] = (f.fallthrough ? "fallthrough " : "") + f.site;
  }
  for (int i = 0; i <= static_cast<int>(DispatchKey::EndOfAliasKeys); ++i) {
    const DispatchKey k = static_cast<DispatchKey>(i);
    if (!isValidDispatchKey(k)) continue;
    std::string line = toString(k);
    line.resize(std::max<size_t>(line.size() + 1, 40), ' ');
    line += keyCategory(k);
    auto it = fallbacks.find(toString(k));
    if (it != fallbacks.end()) {
      line.resize(std::max<size_t>(line.size() + 1, 68), ' ');
      line += "fallback: " + it->second;
    }
    std::cout << line << "\n";
  }
  return 0;
}

int cmdRegistrations(const std::vector<std::string>& args) {
  if (args.size() != 1)
    throw UsageError{"registrations takes one KEY, e.g. CPU"};
  const DispatchKey k = parseDispatchKey(args[0]);
  Dispatcher& d = Dispatcher::singleton();
  for (const OperatorName& n : d.getRegistrationsForDispatchKey(k)) {
    std::cout << toString(n) << "\n";
  }
  if (isRuntimeDispatchKey(k) && d.hasBackendFallbackForDispatchKey(k)) {
    std::cout << "(and a backend fallback for " << toString(k) << ")\n";
  }
  return 0;
}

int cmdSnapshot(const std::vector<std::string>& args) {
  std::optional<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-o" || args[i] == "--out") && i + 1 < args.size()) {
      out = args[++i];
    } else {
      throw UsageError{"snapshot takes only -o FILE, got '" + args[i] + "'"};
    }
  }
  const std::string json = takeRegistrySnapshot().toJson();
  if (!out) {
    std::cout << json;
    return 0;
  }
  const std::string full = resolvePath(*out);
  std::ofstream f(full, std::ios::binary | std::ios::trunc);
  f << json;
  f.close();
  TURNOUT_CHECK(f.good(), ErrorKind::InvalidArgument, "snapshot -o ", *out,
                ": cannot write '", full, "'");
  return 0;
}

int cmdDiff(const std::vector<std::string>& args) {
  if (args.size() != 2)
    throw UsageError{"diff takes two snapshot files, A and B"};
  RegistrySnapshot a = RegistrySnapshot::fromJson(readFile(args[0]), args[0]);
  RegistrySnapshot b = RegistrySnapshot::fromJson(readFile(args[1]), args[1]);
  std::cout << diffSnapshots(a, b).toString();
  return 0;
}

int run(const std::vector<std::string>& argv) {
  size_t i = 0;
  while (i < argv.size() && argv[i].rfind("-", 0) == 0) {
    if (argv[i] == "-h" || argv[i] == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (argv[i] == "--load") {
      if (i + 1 >= argv.size()) throw UsageError{"--load needs a LIB.so path"};
      loadLibrary(argv[i + 1]);
      i += 2;
      continue;
    }
    throw UsageError{"unknown option '" + argv[i] + "'"};
  }
  if (i >= argv.size()) throw UsageError{"no command given"};
  const std::string cmd = argv[i];
  const std::vector<std::string> args(argv.begin() + i + 1, argv.end());
  if (cmd == "ops") return cmdOps(args);
  if (cmd == "schema" || cmd == "dump" || cmd == "table") {
    return cmdOpCommand(cmd, args);
  }
  if (cmd == "keys") return cmdKeys(args);
  if (cmd == "registrations") return cmdRegistrations(args);
  if (cmd == "snapshot") return cmdSnapshot(args);
  if (cmd == "diff") return cmdDiff(args);
  throw UsageError{"unknown command '" + cmd + "'"};
}

}  // namespace
}  // namespace turnout

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    return turnout::run(args);
  } catch (const turnout::UsageError& e) {
    std::cerr << "inspect: " << e.message << "\n\n" << turnout::kUsage;
    return 2;
  } catch (const turnout::Error& e) {
    std::cerr << "inspect: " << e.what() << "\n";
    return 1;
  }
}
