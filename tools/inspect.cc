// inspect: the dispatcher's registry from the command line.
//
//   bazel run //tools:inspect -- ops add          # operators matching "add"
//   bazel run //tools:inspect -- table aten::add.Tensor
//   bazel run //tools:inspect -- snapshot --out=before.json
//   bazel run //tools:inspect -- --load=$PWD/ops.so snapshot --out=after.json
//   bazel run //tools:inspect -- diff before.json after.json
//
// The binary links the reference operators (aten::), so they are always
// there; `--load=lib.so` dlopens shared libraries of the user's operators
// first: their TURNOUT_LIBRARY blocks register into this process's
// dispatcher: inspect links the shared runtime (libturnout.so), and so does
// every library built against //runtime:turnout or an installed turnout
// (pkg-config turnout, CMake's turnout::turnout), so there is one registry.
//
// Flags are Abseil's (absl/flags): defined below with ABSL_FLAG, parsed by
// absl::ParseCommandLine, which hands back the command and its operands.
// They may come before or after the command; `--` ends them. Relative paths
// are taken from the directory `bazel run` was started in.
//
// Exit status: 0 on success and for --help; 1 when the command fails (an
// unknown operator, an unreadable file) or Abseil rejects a flag (an unknown
// flag, a missing value); 2 on a usage error in the command or its operands.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "dispatcher/core/dispatch_key.h"
#include "dispatcher/core/error.h"
#include "dispatcher/debug/registry_snapshot.h"
#include "dispatcher/dispatcher.h"
#include "dispatcher/load_library.h"
#include "dispatcher/schema/schema_parser.h"

// The flags. Their help strings are what `inspect --help` lists.
ABSL_FLAG(std::vector<std::string>, load, {},
          "shared libraries of operators to dlopen before the command, in "
          "order (build them against the shared runtime: //runtime:turnout, "
          "pkg-config turnout or CMake's turnout::turnout). A "
          "comma list, --load=a.so,b.so, or the flag repeated, --load=a.so "
          "--load=b.so; both load a.so then b.so");
ABSL_FLAG(std::string, out, "",
          "for snapshot: the file to write the JSON to, instead of stdout");

namespace turnout {
namespace {

// The usage message, given to absl::SetProgramUsageMessage: --help prints it
// before the flags, a usage error after its message.
constexpr const char* kUsage =
    "usage: inspect [--load=LIB.so[,LIB.so...]] COMMAND [ARGS] [--out=FILE]\n"
    "\n"
    "commands:\n"
    "  ops [FILTER]          operators (with a schema) whose name contains "
    "FILTER\n"
    "  schema OP             the schema of OP (e.g. aten::add.Tensor)\n"
    "  dump OP               OP's registrations per key (c10's dumpState)\n"
    "  table OP              what each runtime key of OP runs, and why\n"
    "  keys                  every dispatch key, its kind and its fallback\n"
    "  registrations KEY     operators with a kernel registered for KEY\n"
    "  snapshot [--out=FILE] the whole registry as JSON (stdout or FILE)\n"
    "  diff A B              what changed from snapshot A to snapshot B\n";

// After the flags in --help.
constexpr const char* kHelpFooter =
    "Flags may come before or after the command; `--` ends them. There are "
    "no one-letter flags except -h: snapshot's -o FILE is now --out=FILE.";

constexpr size_t kHelpWidth = 80;

struct UsageError {
  std::string message;
};

// Appends `text` to `out`, whose current line already holds `indent`
// columns, wrapped at kHelpWidth with later lines indented by `indent`.
void appendWrapped(std::string& out, absl::string_view text, size_t indent) {
  size_t column = indent;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (column > indent && column + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
  }
  out += '\n';
}

// The --help text: the usage message, then every flag defined in this file
// with its help string and default, read back from the flag definitions.
//
// Chose this over Abseil's own --help (absl::ParseCommandLine prints much the
// same listing) because Abseil exits 1 after it, and `inspect --help` has to
// succeed; absl/flags/reflection is public, its help printer is not.
std::string helpText() {
  const std::string file = absl::GetFlagReflectionHandle(FLAGS_load).Filename();
  std::vector<std::pair<std::string, std::string>> rows;  // name, help
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename() != file) continue;
    std::string help = flag->Help();
    const std::string def = flag->DefaultValue();
    if (!def.empty()) absl::StrAppend(&help, " (default: ", def, ")");
    rows.emplace_back(absl::StrCat("--", name), help);
  }
  std::sort(rows.begin(), rows.end());
  rows.emplace_back("--help, -h", "this text");
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.first.size());

  std::string out = absl::StrCat(absl::ProgramUsageMessage(), "\nflags:\n");
  for (const auto& [name, help] : rows) {
    absl::StrAppend(&out, "  ", name,
                    std::string(width - name.size() + 2, ' '));
    appendWrapped(out, help, width + 4);
  }
  out += '\n';
  appendWrapped(out, kHelpFooter, 0);
  return out;
}

// The name of the flag `arg` sets ("load" for "--load=x" or "-load"), or ""
// when `arg` is not a flag.
absl::string_view flagName(absl::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-') return {};
  arg.remove_prefix(arg[1] == '-' ? 2 : 1);
  return arg.substr(0, arg.find('='));
}

// argv as absl::ParseCommandLine is to get it.
struct PreparedArgs {
  std::vector<std::string> args;  // argv[0] first
  bool help = false;              // --help, -help or -h before any `--`
};

// Rewrites argv before Abseil parses it; everything from `--` on is kept as
// it is.
//
// --load repeated: Abseil keeps only the last value of a flag given twice,
// so `--load=a.so --load=b.so` would load b.so alone. Repeating --load has
// always worked, so every --load (`--load=X` or `--load X`) is taken out and
// their values go back as one `--load=a.so,b.so`, in the order given. Chose
// this over a flag type whose parser appends: Abseil parses each value into
// a fresh object, so appending would need state outside the flag.
//
// --help and -h are answered by helpText() (see there why not by Abseil).
// -o, snapshot's output before the flags were Abseil's, which has no
// one-letter flags, gets an error naming --out rather than "unknown flag 'o'".
PreparedArgs prepareArgs(int argc, char** argv) {
  PreparedArgs out;
  out.args.emplace_back(argv[0]);
  std::vector<std::string> loads;
  bool short_out = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--") {
      out.args.insert(out.args.end(), argv + i, argv + argc);
      break;
    }
    const absl::string_view name = flagName(arg);
    if (arg == "-h" || arg == "-help" || arg == "--help") {
      out.help = true;
    } else if (name == "o") {
      short_out = true;
    } else if (name == "load" && arg.find('=') != absl::string_view::npos) {
      loads.emplace_back(arg.substr(arg.find('=') + 1));
    } else if (name == "load" && i + 1 < argc) {
      loads.emplace_back(argv[++i]);
    } else {
      // A trailing --load with no value too: Abseil reports it.
      out.args.emplace_back(arg);
    }
  }
  if (!out.help && short_out) {
    throw UsageError{
        "-o is gone (Abseil's flags have no one-letter forms): "
        "write `snapshot --out=FILE`"};
  }
  if (!loads.empty()) {
    out.args.insert(out.args.begin() + 1,
                    absl::StrCat("--load=", absl::StrJoin(loads, ",")));
  }
  return out;
}

// `path` relative to where `bazel run` was started (it runs us elsewhere).
std::string resolvePath(const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  const char* wd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (wd == nullptr || *wd == '\0') return path;
  return std::string(wd) + "/" + path;
}

void loadLibrary(const std::string& path) {
  TURNOUT_CHECK(!path.empty(), ErrorKind::InvalidArgument,
                "--load: an empty path in the list; give shared libraries, "
                "e.g. --load=a.so,b.so");
  // All or nothing, with the runtime's errors (load_library.h): they name
  // the file and the cause.
  turnout::loadLibrary(resolvePath(path));
}

std::string readFile(const std::string& path) {
  const std::string full = resolvePath(path);
  std::ifstream in(full, std::ios::binary);
  TURNOUT_CHECK(in.good(), ErrorKind::InvalidArgument, "cannot read '", path,
                "' (", full,
                "); write a snapshot with `inspect snapshot --out=", path, "`");
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

int cmdSnapshot(const std::vector<std::string>& args, const std::string& out) {
  if (!args.empty()) {
    throw UsageError{
        "snapshot takes no operands (write to a file with "
        "--out=FILE), got '" +
        args[0] + "'"};
  }
  const std::string json = takeRegistrySnapshot().toJson();
  if (out.empty()) {
    std::cout << json;
    return 0;
  }
  const std::string full = resolvePath(out);
  std::ofstream f(full, std::ios::binary | std::ios::trunc);
  f << json;
  f.close();
  TURNOUT_CHECK(f.good(), ErrorKind::InvalidArgument, "snapshot --out=", out,
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

// Runs the command in `positional` (what absl::ParseCommandLine left, less
// argv[0]) after the flags' libraries are loaded.
int run(const std::vector<std::string>& positional) {
  for (const std::string& path : absl::GetFlag(FLAGS_load)) loadLibrary(path);
  if (positional.empty()) throw UsageError{"no command given"};
  const std::string& cmd = positional[0];
  const std::vector<std::string> args(positional.begin() + 1, positional.end());
  const std::string out = absl::GetFlag(FLAGS_out);
  if (!out.empty() && cmd != "snapshot") {
    throw UsageError{"--out is for snapshot only, not " + cmd};
  }
  if (cmd == "ops") return cmdOps(args);
  if (cmd == "schema" || cmd == "dump" || cmd == "table") {
    return cmdOpCommand(cmd, args);
  }
  if (cmd == "keys") return cmdKeys(args);
  if (cmd == "registrations") return cmdRegistrations(args);
  if (cmd == "snapshot") return cmdSnapshot(args, out);
  if (cmd == "diff") return cmdDiff(args);
  throw UsageError{"unknown command '" + cmd + "'"};
}

}  // namespace
}  // namespace turnout

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(turnout::kUsage);
  try {
    turnout::PreparedArgs prepared = turnout::prepareArgs(argc, argv);
    if (prepared.help) {
      std::cout << turnout::helpText();
      return 0;
    }
    // ParseCommandLine exits 1 itself, with its message, on a bad flag. The
    // char*s it returns point into prepared.args, which outlives them.
    std::vector<char*> c_args;
    for (std::string& a : prepared.args) c_args.push_back(a.data());
    const std::vector<char*> positional =
        absl::ParseCommandLine(static_cast<int>(c_args.size()), c_args.data());
    return turnout::run(
        std::vector<std::string>(positional.begin() + 1, positional.end()));
  } catch (const turnout::UsageError& e) {
    std::cerr << "inspect: " << e.message << "\n\n"
              << turnout::kUsage << "\n`inspect --help` lists the flags.\n";
    return 2;
  } catch (const turnout::Error& e) {
    std::cerr << "inspect: " << e.what() << "\n";
    return 1;
  }
}
