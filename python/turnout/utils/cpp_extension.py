"""``turnout.utils.cpp_extension``: build C++ operator libraries at run time.

Shaped like ``torch.utils.cpp_extension``: :func:`load` compiles your C++
sources into a shared library against the headers and the shared runtime
this package carries, loads it with :func:`turnout.ops.load_library`, and
returns a module whose attributes are its operators. :func:`load_inline`
takes the sources as strings, and with ``functions=[...]`` makes plain C++
functions operators, their schemas inferred from their signatures: no
binding code, no pybind11.

- :func:`include_paths`, :func:`library_paths`, :func:`cflags` and
  :func:`ldflags` give the flags for your own build system (make, CMake,
  setuptools), as :func:`load` uses them.
- Builds are cached by content: the same sources, flags, compiler and
  turnout runtime load the library built before, in any process, without
  compiling. The cache is ``$TURNOUT_EXTENSIONS_DIR/<name>``, by default
  ``$XDG_CACHE_HOME/turnout_extensions/<name>`` (``~/.cache/...``).
- ninja compiles the sources in parallel when it is on the PATH (Debian's
  ``ninja-build``); otherwise the compiler is run directly. ``$CXX`` picks
  the compiler (default ``c++``), ``$MAX_JOBS`` the number of parallel
  compiles.

Example::

    >>> import turnout
    >>> from turnout.utils import cpp_extension
    >>> ext = cpp_extension.load_inline(
    ...     "cppext_doc",
    ...     cpp_sources='''
    ...         turnout::Tensor scale(const turnout::Tensor& x, double f) {
    ...           return turnout::mul(x, f);
    ...         }''',
    ...     functions=["scale"])
    >>> ext.scale(turnout.tensor([1.0, 2.0]), 3.0)
    tensor([3., 6.])
    >>> str(ext.scale.default._schema)
    'cppext_doc::scale(Tensor _0, float _1) -> Tensor _0'
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
import types
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

import turnout
from turnout import _C

__all__ = [
    "BuildError", "cflags", "get_default_build_root", "include_paths",
    "ldflags", "library_paths", "load", "load_inline",
]

_PathLike = Union[str, "os.PathLike[str]"]

# Part of every cache key: bump it when what a key stands for changes (the
# flags' meaning, the build steps), so that older builds are not reused.
_CACHE_FORMAT = "turnout-cpp-extension-1"

# The flags every extension is compiled with: turnout's headers are C++17,
# and what is installed is optimised (a user passes -O0 -g in extra_cflags,
# which come later and win).
_BASE_CFLAGS = ["-std=c++17", "-O2", "-DNDEBUG", "-fPIC"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class BuildError(RuntimeError):
    """Compiling or linking an extension failed.

    The message holds the failing command and the compiler's own output
    (``main.cpp:3:10: error: ...``).

    Attributes:
        stage: ``"compile"`` or ``"link"``.
        command: the failing command line, as a string.
        output: what the compiler (or ninja) printed.
    """

    def __init__(self, message: str, stage: str, command: str, output: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.command = command
        self.output = output


# ---- Flags for any build system ------------------------------------------------------


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(turnout.__file__))


def include_paths() -> List[str]:
    """The include directories an extension needs.

    ``<package>/include/turnout``, which holds turnout's public headers at
    their paths in the source tree (``#include "dispatcher/library.h"``,
    ``#include "kernels/ops.h"``). The headers also include Abseil's, which
    come from the system include path (Debian's ``libabsl-dev``), so nothing
    more is listed.

    Raises:
        RuntimeError: this turnout package has no headers (a source
            checkout used without building it).

    Example::

        >>> from turnout.utils import cpp_extension
        >>> [p.endswith("include/turnout") for p in cpp_extension.include_paths()]
        [True]
    """
    path = os.path.join(_package_dir(), "include", "turnout")
    if not os.path.isfile(os.path.join(path, "dispatcher", "library.h")):
        raise RuntimeError(
            f"cpp_extension: turnout's headers are not in {path}: this turnout "
            f"package was not installed with them. Install it with "
            f"`bazel run //:install_python` (or the wheel), or use it from "
            f"Bazel's runfiles")
    return [path]


def library_paths() -> List[str]:
    """The library directories an extension needs: ``<package>/lib``, which
    holds the shared runtime ``libturnout.so.<version>``.

    Example::

        >>> from turnout.utils import cpp_extension
        >>> [p.endswith("lib") for p in cpp_extension.library_paths()]
        [True]
    """
    path = os.path.join(_package_dir(), "lib")
    if not os.path.isfile(os.path.join(path, _runtime_soname())):
        raise RuntimeError(
            f"cpp_extension: the shared runtime {_runtime_soname()} is not in "
            f"{path}: this turnout package was not installed with it")
    return [path]


def _runtime_soname() -> str:
    return _C._build_info()["soname"]


def cflags() -> List[str]:
    """The compiler flags :func:`load` compiles each source with, for your
    own build system: C++17, optimised, position-independent, and turnout's
    headers as system headers (``-isystem``), so that your ``-Wall
    -Werror`` judges your code only.

    Example::

        >>> from turnout.utils import cpp_extension
        >>> cpp_extension.cflags()[:4]
        ['-std=c++17', '-O2', '-DNDEBUG', '-fPIC']
        >>> # g++ $(cflags) -shared my_ops.cc -o libmy_ops.so $(ldflags)
    """
    out = list(_BASE_CFLAGS)
    for path in include_paths():
        out += ["-isystem", path]
    return out


def ldflags() -> List[str]:
    """The linker flags :func:`load` links with, for your own build system:
    the shared runtime by its file name (the package ships
    ``libturnout.so.<version>``, no unversioned ``libturnout.so``), and an
    rpath to the package's ``lib`` folder so that the library finds the
    runtime outside this process too. Put them after your objects.

    Example::

        >>> from turnout.utils import cpp_extension
        >>> flags = cpp_extension.ldflags()
        >>> flags[1] == "-l:" + turnout._C._build_info()["soname"]
        True
    """
    (lib,) = library_paths()
    return [f"-L{lib}", f"-l:{_runtime_soname()}", f"-Wl,-rpath,{lib}"]


def get_default_build_root() -> str:
    """Where extensions are built and cached, one folder per name:
    ``$TURNOUT_EXTENSIONS_DIR``, else ``$XDG_CACHE_HOME/turnout_extensions``,
    else ``~/.cache/turnout_extensions``."""
    root = os.environ.get("TURNOUT_EXTENSIONS_DIR")
    if root:
        return os.path.abspath(os.path.expanduser(root))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(cache), "turnout_extensions")


# ---- load / load_inline -------------------------------------------------------------

# What this process loaded, by extension name: the library's path and the
# module returned for it. A library cannot be unloaded, so a name maps to
# one build for the life of the process. Guarded by _loaded_lock, held for a
# whole load (threads of one process building the same extension take turns
# here; processes take turns on the build folder's lock file).
_loaded: Dict[str, Tuple[str, types.ModuleType]] = {}
_loaded_lock = threading.RLock()


def load(name: str,
         sources: Union[_PathLike, Sequence[_PathLike]],
         extra_cflags: Optional[Sequence[str]] = None,
         extra_ldflags: Optional[Sequence[str]] = None,
         extra_include_paths: Optional[Sequence[_PathLike]] = None,
         build_directory: Optional[_PathLike] = None,
         verbose: bool = False,
         with_cuda: Optional[bool] = None) -> types.ModuleType:
    """Compiles C++ sources into an operator library, loads it, and returns
    its operators as a module.

    As ``torch.utils.cpp_extension.load``: the sources are compiled with the
    system compiler against this package's headers and shared runtime
    (:func:`cflags`, :func:`ldflags`, then your extra flags) into
    ``lib<name>_<hash>.so`` in the build directory, and loaded with
    :func:`turnout.ops.load_library`, so their ``TURNOUT_LIBRARY`` blocks
    register, all or nothing. ninja builds when it is on the PATH (sources
    compiled in parallel, unchanged ones not recompiled); otherwise the
    compiler is run directly.

    The build is cached by content. The key hashes the sources' paths and
    contents, the flags, the compiler, turnout's version and the runtime's
    path; when a library for that key exists it is loaded without compiling.
    Headers your sources include are not part of the key: change a source
    (or a flag) to rebuild after editing one. Processes that build the same
    extension at once take turns (a lock file in the build directory), and
    a library appears under its final name only once it is complete.

    A process holds one build per name: its operators stay registered and
    a library cannot be unloaded. Loading the same name again with the same
    inputs returns the same module; with changed inputs it builds the new
    library (ready for the next process) and raises.

    Args:
        name: the extension's name, a C++ identifier. The module's
            attributes are the operators of namespace ``name``
            (``turnout.ops.<name>.<op>`` packets), so name your
            ``TURNOUT_LIBRARY`` namespace after it.
        sources: a C++ source file, or a list of them.
        extra_cflags: more compiler flags (after the default ones).
        extra_ldflags: more linker flags, e.g. ``["-lfoo"]``.
        extra_include_paths: more include directories.
        build_directory: the folder to build and cache in; by default
            ``<get_default_build_root()>/<name>``.
        verbose: print the commands and the compiler's output, or that the
            cached library was loaded.
        with_cuda: CUDA sources are not supported yet; ``True`` raises.

    Returns:
        A module named ``name``: ``__file__`` is the library's path, and
        each operator of namespace ``name`` is an attribute.

    Raises:
        BuildError: compiling or linking failed; the message holds the
            command and the compiler's errors.
        OSError: the library built but does not load (a symbol declared and
            never defined, a library missing from ``extra_ldflags``); the
            exception's note names the extension.
        InvalidArgumentError, TypeError, ...: a ``TURNOUT_LIBRARY`` block
            failed to register (nothing of the library stays registered).
        RuntimeError: ``name`` was loaded with other inputs in this process.

    Example::

        >>> import os, tempfile
        >>> from turnout.utils import cpp_extension
        >>> src = os.path.join(tempfile.mkdtemp(), "twice.cc")
        >>> with open(src, "w") as f:
        ...     _ = f.write('''
        ... #include "dispatcher/library.h"
        ... #include "kernels/ops.h"
        ... turnout::Tensor twice(const turnout::Tensor& x) {
        ...   return turnout::add(x, x);
        ... }
        ... TURNOUT_LIBRARY(cppext_docload, m) {
        ...   m.def("twice(Tensor x) -> Tensor");
        ... }
        ... TURNOUT_LIBRARY_IMPL(cppext_docload, CPU, m) {
        ...   m.impl("twice", TURNOUT_FN(twice));
        ... }
        ... ''')
        >>> ext = cpp_extension.load("cppext_docload", [src])
        >>> ext.twice(turnout.tensor([1.0, 2.0]))
        tensor([2., 4.])
        >>> ext.__file__.endswith(".so")
        True
    """
    _check_name("load", name)
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    srcs = [os.path.abspath(os.fspath(s)) for s in sources]
    if not srcs:
        raise ValueError(f"load('{name}'): sources is empty; give at least one "
                         f"C++ source file")
    for s in srcs:
        if not os.path.isfile(s):
            raise FileNotFoundError(
                f"load('{name}'): the source {s} does not exist (relative paths "
                f"are from the current directory, {os.getcwd()})")
    with _loaded_lock:
        return _load(f"load('{name}')", name, srcs, None, extra_cflags,
                     extra_ldflags, extra_include_paths, build_directory,
                     verbose, with_cuda)


def load_inline(name: str,
                cpp_sources: Union[str, Sequence[str]],
                functions: Union[None, str, Sequence[str], Mapping[str, str]] = None,
                extra_cflags: Optional[Sequence[str]] = None,
                extra_ldflags: Optional[Sequence[str]] = None,
                extra_include_paths: Optional[Sequence[_PathLike]] = None,
                build_directory: Optional[_PathLike] = None,
                verbose: bool = False,
                with_cuda: Optional[bool] = None) -> types.ModuleType:
    """Compiles C++ source text into an operator library, loads it, and
    returns its operators as a module.

    As ``torch.utils.cpp_extension.load_inline``: the strings of
    ``cpp_sources`` are joined into ``main.cpp`` in the build directory,
    after ``#include "dispatcher/library.h"`` and ``#include
    "kernels/ops.h"`` (``turnout::Tensor`` and the C++ front end,
    ``turnout::add``, ``turnout::mul``, ...), and built by :func:`load`,
    cache included.

    For each name of ``functions``, a registration is appended that makes
    the C++ function of that name the operator ``<name>::<function>``, with
    the schema inferred from its signature (``Tensor f(const Tensor&,
    double)`` gives ``(Tensor _0, float _1) -> Tensor _0``; see
    ``dispatcher/infer_schema.h`` for the C++ types allowed) and the
    function as its CompositeImplicitAutograd kernel: it runs for every
    backend, and autograd goes through the operators it calls. Call them
    with positional arguments. The registration is a ``TURNOUT_LIBRARY``
    block, or a ``TURNOUT_LIBRARY_FRAGMENT`` when your sources hold their
    own ``TURNOUT_LIBRARY(<name>, m)``.

    Args:
        name: the extension's name, a C++ identifier; also the operators'
            namespace.
        cpp_sources: C++ source text, or a list of them.
        functions: names of C++ functions to make operators, or a dict of
            name -> docstring (set as the operator packet's ``__doc__``).
        extra_cflags, extra_ldflags, extra_include_paths, build_directory,
            verbose, with_cuda: as for :func:`load`.

    Returns:
        A module named ``name`` whose attributes are the operators of
        namespace ``name``; ``__file__`` is the library's path.

    Raises:
        BuildError, OSError, RuntimeError, ...: as :func:`load`.

    Example::

        >>> from turnout.utils import cpp_extension
        >>> ext = cpp_extension.load_inline(
        ...     "cppext_docinline",
        ...     cpp_sources='''
        ...         std::tuple<turnout::Tensor, turnout::Tensor> halves(
        ...             const turnout::Tensor& x) {
        ...           return {turnout::mul(x, 0.5), turnout::mul(x, 0.5)};
        ...         }''',
        ...     functions={"halves": "x / 2, twice"})
        >>> ext.halves(turnout.tensor([2.0]))
        (tensor([1.]), tensor([1.]))
        >>> ext.halves.__doc__
        'x / 2, twice'
    """
    where = f"load_inline('{name}')"
    _check_name("load_inline", name)
    if isinstance(cpp_sources, str):
        cpp_sources = [cpp_sources]
    if not all(isinstance(s, str) for s in cpp_sources):
        raise TypeError(f"{where}: expected cpp_sources to be a str or a list of "
                        f"str, got {type(cpp_sources).__name__}")
    docs = _function_docs(where, functions)

    parts = ['#include "dispatcher/library.h"', '#include "kernels/ops.h"', ""]
    parts += list(cpp_sources)
    if docs:
        # The user's own DEF block for this namespace may sit in the sources:
        # then a FRAGMENT adds to it (a namespace has one DEF).
        own_def = re.search(rf"\bTURNOUT_LIBRARY\s*\(\s*{name}\s*,",
                            "\n".join(cpp_sources))
        macro = "TURNOUT_LIBRARY_FRAGMENT" if own_def else "TURNOUT_LIBRARY"
        parts += ["", "// The functions given to load_inline, as operators; "
                  "schemas inferred from their signatures.",
                  f"{macro}({name}, m) {{"]
        parts += [f'  m.def("{f}", TURNOUT_FN({f}));' for f in docs]
        parts += ["}"]
    text = "\n".join(parts) + "\n"

    with _loaded_lock:
        module = _load(where, name, None, text, extra_cflags, extra_ldflags,
                       extra_include_paths, build_directory, verbose, with_cuda)
    for function, doc in docs.items():
        if doc is not None and hasattr(module, function):
            getattr(module, function).__doc__ = doc
    return module


# ---- Implementation details -----------------------------------------------------------


def _check_name(what: str, name: object) -> None:
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError(
            f"{what}(name): expected a C++ identifier (letters, digits and "
            f"'_', not starting with a digit), got {name!r}; it names the "
            f"library file and the operators' namespace")


def _function_docs(where: str, functions: object) -> Dict[str, Optional[str]]:
    if functions is None:
        return {}
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, Mapping):
        docs = {f: d for f, d in functions.items()}
    elif isinstance(functions, (list, tuple)):
        docs = {f: None for f in functions}
    else:
        raise TypeError(f"{where}: expected functions to be a list of names or "
                        f"a dict of name -> docstring, got "
                        f"{type(functions).__name__}")
    for f in docs:
        if not isinstance(f, str) or not _IDENTIFIER.match(f):
            raise ValueError(f"{where}: the function name {f!r} is not a C++ "
                             f"identifier; give the name of a function defined "
                             f"in cpp_sources (outside any namespace)")
    return docs


def _compiler() -> List[str]:
    """$CXX (split like a shell word list: "ccache g++" works), else c++,
    else g++."""
    cxx = shlex.split(os.environ.get("CXX", ""))
    if not cxx:
        cxx = ["c++" if shutil.which("c++") else "g++"]
    exe = shutil.which(cxx[0])
    if exe is None:
        raise RuntimeError(
            f"cpp_extension: the C++ compiler '{cxx[0]}' is not on the PATH"
            + (" ($CXX)" if os.environ.get("CXX") else "")
            + "; install one (apt-get install g++) or set $CXX")
    return [exe] + cxx[1:]


def _file_identity(path: str) -> str:
    """A file's canonical path, size and modification time: changes when it
    is replaced (a compiler upgrade, a rebuilt runtime)."""
    real = os.path.realpath(path)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def _jobs() -> int:
    value = os.environ.get("MAX_JOBS")
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"cpp_extension: $MAX_JOBS must be a positive "
                             f"integer, got {value!r}")
        return int(value)
    return os.cpu_count() or 1


def _say(verbose: bool, message: str) -> None:
    if verbose:
        print(message, flush=True)


def _load(where: str, name: str, sources: Optional[List[str]],
          inline_text: Optional[str], extra_cflags, extra_ldflags,
          extra_include_paths, build_directory, verbose: bool,
          with_cuda: Optional[bool]) -> types.ModuleType:
    """The common part of load and load_inline: `sources` are files, or
    `inline_text` is main.cpp's text. Precondition: _loaded_lock is held."""
    if with_cuda:
        raise NotImplementedError(
            f"{where}: with_cuda=True: cpp_extension does not build CUDA "
            f"sources yet; build .cu files with nvcc against include_paths() "
            f"and load the library with turnout.ops.load_library")
    for what, flags in (("extra_cflags", extra_cflags),
                        ("extra_ldflags", extra_ldflags)):
        if flags is not None and (isinstance(flags, str) or
                                  not all(isinstance(f, str) for f in flags)):
            raise TypeError(f"{where}: expected {what} to be a list of str, got "
                            f"{flags!r}")
    build_dir = os.path.abspath(os.fspath(build_directory)) if build_directory \
        else os.path.join(get_default_build_root(), name)
    work_dir = os.path.join(build_dir, "build")
    if inline_text is not None:
        sources = [os.path.join(work_dir, "main.cpp")]
    assert sources is not None

    compile_flags = cflags()
    for path in extra_include_paths or []:
        compile_flags.append("-I" + os.path.abspath(os.fspath(path)))
    compile_flags += list(extra_cflags or [])
    link_flags = ["-shared"]
    link_after = ldflags() + list(extra_ldflags or [])
    cxx = _compiler()

    # The cache key. Everything that changes the library is in it; how it is
    # built (ninja or not) is not.
    key = hashlib.sha256()
    runtime = os.path.join(library_paths()[0], _runtime_soname())
    for part in [_CACHE_FORMAT, name, turnout.__version__,
                 _file_identity(runtime), _file_identity(cxx[0]),
                 shlex.join(cxx[1:]), shlex.join(compile_flags),
                 shlex.join(link_flags + link_after)]:
        key.update(part.encode() + b"\0")
    for path in sources:
        key.update(path.encode() + b"\0")
        if inline_text is not None:
            key.update(inline_text.encode())
        else:
            with open(path, "rb") as f:
                key.update(f.read())
        key.update(b"\0")
    digest = key.hexdigest()[:8]
    library = os.path.join(build_dir, f"lib{name}_{digest}.so")

    previous = _loaded.get(name)
    if previous is not None and previous[0] == library:
        return previous[1]

    if os.path.exists(library):
        _say(verbose, f"cpp_extension: {where}: loading the cached {library}")
    else:
        os.makedirs(work_dir, exist_ok=True)
        with _build_lock(build_dir, where, verbose):
            # Another process may have built it while we waited.
            if os.path.exists(library):
                _say(verbose, f"cpp_extension: {where}: built meanwhile by "
                     f"another process; loading {library}")
            else:
                if inline_text is not None:
                    _write_if_changed(sources[0], inline_text)
                started = time.perf_counter()
                built = _build(where, name, work_dir, cxx, sources,
                               compile_flags, link_flags, link_after, verbose)
                # Complete before it appears under the name the cache looks
                # for: a copy under a temporary name, renamed atomically.
                temporary = f"{library}.tmp{os.getpid()}"
                shutil.copy2(built, temporary)
                os.replace(temporary, library)
                _say(verbose, f"cpp_extension: {where}: built {library} in "
                     f"{time.perf_counter() - started:.2f} s")

    if previous is not None:
        raise RuntimeError(
            f"{where}: this process already loaded extension '{name}' from "
            f"{previous[0]}; its changed build {library} cannot replace it (a "
            f"loaded library is never unloaded, and its operators stay "
            f"registered). Load it in a new process, or give the changed "
            f"extension another name")

    try:
        turnout.ops.load_library(library)
    except Exception as e:
        if hasattr(e, "add_note"):
            e.add_note(
                f"cpp_extension: {where} compiled and linked {library}, but "
                f"loading it failed: a function declared and never defined, a "
                f"library missing from extra_ldflags, or a TURNOUT_LIBRARY "
                f"block that does not register")
        raise
    module = _module_for(name, library)
    _loaded[name] = (library, module)
    return module


def _module_for(name: str, library: str) -> types.ModuleType:
    """A module named `name` with the operators of namespace `name`."""
    module = types.ModuleType(
        name, f"The operators of namespace '{name}', loaded from {library} by "
        f"turnout.utils.cpp_extension.")
    module.__file__ = library
    namespace = getattr(turnout.ops, name)
    prefix = name + "::"
    for full in _C._dispatch_get_all_op_names():
        if full.startswith(prefix):
            op = full[len(prefix):].split(".", 1)[0]
            setattr(module, op, getattr(namespace, op))
    return module


def _write_if_changed(path: str, text: str) -> None:
    """Writes `text` to `path` unless it holds it already (ninja then keeps
    the object)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


@contextlib.contextmanager
def _build_lock(build_dir: str, where: str, verbose: bool) -> Iterator[None]:
    """Holds `build_dir`/lock: one build of an extension at a time across
    processes. flock is released by the kernel when its holder dies, so a
    killed build leaves no stale lock."""
    fd = os.open(os.path.join(build_dir, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _say(verbose, f"cpp_extension: {where}: waiting for another process "
                 f"building in {build_dir}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _object_names(sources: List[str]) -> List[str]:
    """`dir/x.cc` -> `x.o`; sources of the same stem get `_1`, `_2`, ..."""
    names: List[str] = []
    for i, s in enumerate(sources):
        stem = os.path.splitext(os.path.basename(s))[0]
        names.append(f"{stem}.o" if f"{stem}.o" not in names else f"{stem}_{i}.o")
    return names


def _build(where: str, name: str, work_dir: str, cxx: List[str],
           sources: List[str], compile_flags: List[str], link_flags: List[str],
           link_after: List[str], verbose: bool) -> str:
    """Compiles and links in `work_dir`; returns the library's path there.
    Precondition: the build lock is held."""
    output = os.path.join(work_dir, f"lib{name}.so")
    objects = [os.path.join(work_dir, o) for o in _object_names(sources)]
    ninja = shutil.which("ninja")
    if ninja:
        _build_with_ninja(where, ninja, work_dir, cxx, sources, objects, output,
                          compile_flags, link_flags, link_after, verbose)
    else:
        _build_directly(where, work_dir, cxx, sources, objects, output,
                        compile_flags, link_flags, link_after, verbose)
    return output


def _ninja_path(path: str) -> str:
    """A path as a ninja build line needs it: '$', ' ' and ':' escaped."""
    return re.sub(r"([$ :])", r"$\1", path)


def _build_with_ninja(where, ninja, work_dir, cxx, sources, objects, output,
                      compile_flags, link_flags, link_after, verbose) -> None:
    lines = [
        "# Written by turnout.utils.cpp_extension; rewritten on each build.",
        "ninja_required_version = 1.3",
        f"cxx = {shlex.join(cxx)}",
        f"cflags = {shlex.join(compile_flags)}",
        f"ldflags = {shlex.join(link_flags)}",
        f"libs = {shlex.join(link_after)}",
        "",
        "rule compile",
        "  command = $cxx -MMD -MF $out.d $cflags -c $in -o $out",
        "  depfile = $out.d",
        "  deps = gcc",
        "  description = CXX $in",
        "",
        "rule link",
        "  command = $cxx $ldflags $in $libs -o $out",
        "  description = LINK $out",
        "",
    ]
    for src, obj in zip(sources, objects):
        lines.append(f"build {_ninja_path(obj)}: compile {_ninja_path(src)}")
    lines.append(f"build {_ninja_path(output)}: link "
                 + " ".join(_ninja_path(o) for o in objects))
    lines.append(f"default {_ninja_path(output)}")
    _write_if_changed(os.path.join(work_dir, "build.ninja"), "\n".join(lines) + "\n")

    command = [ninja, "-j", str(_jobs())] + (["-v"] if verbose else [])
    _say(verbose, f"$ cd {shlex.quote(work_dir)} && {shlex.join(command)}")
    proc = subprocess.run(command, cwd=work_dir, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    _say(verbose and bool(proc.stdout), proc.stdout.rstrip())
    if proc.returncode != 0:
        # ninja prints "FAILED: <target>", the command, then its output.
        failed = re.search(r"^FAILED: (.*)$", proc.stdout, re.M)
        stage = "link" if failed and failed.group(1).strip().endswith(".so") \
            else "compile"
        raise _build_error(where, stage, shlex.join(command), proc.stdout, work_dir)


def _build_directly(where, work_dir, cxx, sources, objects, output,
                    compile_flags, link_flags, link_after, verbose) -> None:
    """Without ninja: every source compiled (in parallel), then the link."""
    def run(command: List[str]) -> "subprocess.CompletedProcess[str]":
        return subprocess.run(command, cwd=work_dir, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    compiles = [cxx + compile_flags + ["-c", src, "-o", obj]
                for src, obj in zip(sources, objects)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=_jobs()) as pool:
        results = list(pool.map(run, compiles))
    for command, proc in zip(compiles, results):
        _say(verbose, f"$ {shlex.join(command)}")
        _say(verbose and bool(proc.stdout), proc.stdout.rstrip())
    for command, proc in zip(compiles, results):
        if proc.returncode != 0:
            raise _build_error(where, "compile", shlex.join(command), proc.stdout,
                               work_dir)
    command = cxx + link_flags + objects + link_after + ["-o", output]
    _say(verbose, f"$ {shlex.join(command)}")
    proc = run(command)
    _say(verbose and bool(proc.stdout), proc.stdout.rstrip())
    if proc.returncode != 0:
        raise _build_error(where, "link", shlex.join(command), proc.stdout, work_dir)


def _build_error(where: str, stage: str, command: str, output: str,
                 work_dir: str) -> BuildError:
    hint = ""
    if re.search(r"absl/[\w/]+\.h: No such file", output):
        hint = ("\nturnout's headers need Abseil's: install them "
                "(apt-get install libabsl-dev)")
    what = "compiling" if stage == "compile" else "linking"
    return BuildError(
        f"{where}: {what} failed (in {work_dir}):\n$ {command}\n"
        f"{output.rstrip()}{hint}", stage, command, output)
