"""Installs the turnout package (with its extension modules: _C, and
_C_cuda where CUDA was built) for Debian's /usr/bin/python3.

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

import package_layout

PYTHON = "/usr/bin/python3"


def user_site() -> Path:
    out = subprocess.run([PYTHON, "-m", "site", "--user-site"], check=True,
                         capture_output=True, text=True)
    return Path(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", help="directory to install into (default: "
                        "the user site-packages of /usr/bin/python3)")
    args = parser.parse_args()

    try:
        # Beside this script in the runfiles: the package as it is
        # installed, built optimised (//python:package_opt).
        src = package_layout.runfiles_package(__file__, "install_python")
    except package_layout.PackageError as e:
        sys.exit(f"install_python: {e}")
    target = package_layout.user_path(args.target) if args.target else user_site()
    target.mkdir(parents=True, exist_ok=True)

    dest = target / "turnout"
    if dest.exists():
        if not (dest / "__init__.py").exists():
            sys.exit(f"install_python: {dest} exists and is not a turnout "
                     f"package; remove it or choose another --target")
        shutil.rmtree(dest)
    dest.mkdir()
    for rel, f in package_layout.package_files(src):
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, out)  # follows the runfiles symlinks
        out.chmod(package_layout.file_mode(rel))

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
