"""Installs the turnout package (with its extension module _C) for Debian's
/usr/bin/python3.

    bazel run //:install_python                    # into the user site
    bazel run //:install_python -- --target DIR    # into DIR

The default target is /usr/bin/python3's user site-packages
(`/usr/bin/python3 -m site --user-site`), which that interpreter searches on
its own, so that `import turnout` works from any script. With --target, put
DIR on PYTHONPATH. An earlier turnout in the target is replaced.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

PYTHON = "/usr/bin/python3"


def user_site() -> Path:
    out = subprocess.run([PYTHON, "-m", "site", "--user-site"], check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip())


def package_dir() -> Path:
    # Beside this script in the runfiles: the package as it is installed,
    # built optimised (//python:package_opt): the .py files, _C.so,
    # lib/libturnout.so.V and include/.
    here = Path(os.path.abspath(__file__)).parent
    pkg = here / "site" / "turnout"
    if not (pkg / "__init__.py").exists() or not (pkg / "_C.so").exists():
        sys.exit(f"install_python: {pkg} lacks __init__.py or _C.so; run me "
                 f"with `bazel run //:install_python`, which builds them")
    return pkg


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", help="directory to install into (default: "
                        "the user site-packages of /usr/bin/python3)")
    args = parser.parse_args()

    if args.target:
        target = Path(args.target)
        if not target.is_absolute():
            # `bazel run` runs us in the runfiles; relative paths mean the
            # user's directory.
            target = Path(os.environ.get("BUILD_WORKING_DIRECTORY", ".")) / target
    else:
        target = user_site()
    target.mkdir(parents=True, exist_ok=True)

    dest = target / "turnout"
    if dest.exists():
        if not (dest / "__init__.py").exists():
            sys.exit(f"install_python: {dest} exists and is not a turnout "
                     f"package; remove it or choose another --target")
        shutil.rmtree(dest)
    dest.mkdir()
    src = package_dir()
    for f in sorted(src.rglob("*")):
        if f.is_file() and "__pycache__" not in f.parts:
            out = dest / f.relative_to(src)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, out)  # follows the runfiles symlinks
            out.chmod(0o755 if ".so" in f.name else 0o644)

    print(f"installed turnout into {dest}")
    on_path = subprocess.run(
        [PYTHON, "-c", "import sys; print('\\n'.join(sys.path))"],
        capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                             if k != "PYTHONPATH"}).stdout
    if str(target) not in on_path.splitlines():
        print(f"{target} is not on {PYTHON}'s path: run with "
              f"PYTHONPATH={target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
