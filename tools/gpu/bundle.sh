#!/usr/bin/env bash
# Packs turnout's GPU tests and benchmarks for a GPU machine that has a CUDA
# driver and toolkit but no Bazel and none of our Debian packages (a lent
# cloud GPU, a cluster node). Built here, optimised, with --config=opt;
# run there with the bundle's run.sh:
#
#   tools/gpu/bundle.sh DIR            # writes DIR/turnout-gpu.tar.xz
#   # on the GPU machine:
#   tar xJf turnout-gpu.tar.xz && turnout-gpu/run.sh tests   # or: bench
#
# The bundle holds the test and benchmark binaries, the Python package with
# its extensions (_C, and _C_cuda, which `import turnout` loads with
# libturnout_cuda.so where the NVIDIA driver is), Debian's Python 3.11 with
# numpy and pytest (the extensions are built for it), and every shared
# library they load (libturnout.so, libturnout_cuda.so, ...) except glibc's,
# libstdc++/libgcc and CUDA's own (cudart, cuBLAS: the GPU machine's toolkit
# provides them, found through /usr/local/cuda/lib64 or LD_LIBRARY_PATH).
# The target machine needs glibc >= this machine's (2.36) and x86-64.
set -euo pipefail
cd "$(dirname "$0")/../.."

out_dir=${1:?usage: tools/gpu/bundle.sh OUT_DIR}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

tools/install_deps.sh

# The C++ GPU tests are the targets tagged "cuda" that are cc_tests; the
# Python ones are listed in tools/gpu/run.sh.
cc_tests=$(bazel query 'kind(cc_test, attr(tags, "\bcuda\b", tests(//...)))' 2>/dev/null)
if [ -z "$cc_tests" ]; then
  echo "bundle.sh: no CUDA test targets: is nvcc installed (see third_party/cuda/cuda.bzl)?" >&2
  exit 1
fi
benches=$(bazel query 'attr(tags, "\bcuda\b", kind(cc_binary, //bench:all))' 2>/dev/null || true)
bazel build --config=opt --dynamic_mode=off $cc_tests $benches //python:turnout

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/turnout-gpu"
mkdir -p "$root"/{bin,lib,py/bin,py/lib,site,tests}

bin=$(bazel info --config=opt bazel-bin 2>/dev/null)
for t in $cc_tests $benches; do
  path=${t#//}
  cp -L "$bin/${path/://}" "$root/bin/"
done

# Debian's interpreter and standard library (its landmark, lib/python3.11/os.py
# beside bin/, makes it find the library there).
cp -L /usr/bin/python3.11 "$root/py/bin/python3"
tar -C /usr/lib -cf - \
  --exclude='__pycache__' --exclude='python3.11/test' \
  --exclude='python3.11/idlelib' --exclude='python3.11/tkinter' \
  --exclude='python3.11/turtledemo' --exclude='python3.11/ensurepip' \
  --exclude='python3.11/lib2to3' --exclude='python3.11/config-*' \
  --exclude='python3.11/pydoc_data' python3.11 | tar -C "$root/py/lib" -xf -
for p in numpy _pytest pytest pluggy iniconfig packaging attr attrs \
         py.py; do
  src=/usr/lib/python3/dist-packages/$p
  [ -e "$src" ] || continue
  tar -C /usr/lib/python3/dist-packages -cf - --exclude='__pycache__' \
    --exclude='numpy/*/tests' --exclude='numpy/tests' "$p" |
    tar -C "$root/site" -xf -
done
cp -r python/turnout "$root/site/"
find "$root/site/turnout" -name '__pycache__' -prune -exec rm -rf {} +
# What the build adds to the package, as the installed package lays it out:
# the extensions, the shared runtime and libturnout_cuda.so where their
# rpath ($ORIGIN/lib) finds them, and _version.py.
for f in _C.so _C_cuda.so lib _version.py; do
  cp -RL "$bin/python/turnout/$f" "$root/site/turnout/"
done
chmod -R u+w "$root"

# Python tests that have a CUDA variant, and their helpers; the Python
# benchmark (run.sh python turnout-gpu/bench/cuda_python_bench.py).
cp tools/gpu/run.sh "$root/"
mkdir -p "$root/bench"
cp bench/cuda_python_bench.py "$root/bench/"
cp tests/python/run_pytest.py tests/python/script_runner.py \
   tests/python/test_cuda.py tests/python/test_tensor.py \
   tests/python/test_docstrings.py tests/python/op_db.py \
   tests/python/test_op_db_cuda.py "$root/tests/"

# Every shared library the binaries and extensions load, but the system's
# own, CUDA's and turnout's (in site/turnout/lib).
skip='^(libturnout|linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread|libstdc\+\+|libgcc_s|libresolv|libnsl\.so|libutil|libanl|libnss|libcuda|libcudart|libcublas|libz\.so|libexpat)'
find "$root/bin" "$root/py" "$root/site" -type f \( -perm -u+x -o -name '*.so*' \) |
  while read -r f; do
    { ldd "$f" 2>/dev/null || true; } |
      awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
  done | sort -u | while read -r name path; do
    if [[ ! "$name" =~ $skip ]]; then cp -L "$path" "$root/lib/$name"; fi
  done

# xz with a dictionary larger than one test binary: the binaries share most
# of their bytes (each links all of turnout statically), so the archive is
# about a third of gzip's (36 MB against 93).
tar -C "$stage" -cf - turnout-gpu | xz -T0 -9 > "$out_dir/turnout-gpu.tar.xz"
du -h "$out_dir/turnout-gpu.tar.xz"
