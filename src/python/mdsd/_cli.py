"""The `mdsd` command of the wheel: runs the C program bundled in the package (mdsd/_bin/mdsd,
built from the same tree as the package's library, with the gnuplot scripts of `mdsd plot`
beside it in mdsd/_bin/plots). The program replaces this Python process (exec), so its exit
status, signals and standard streams are the program's own."""

import os
import sys

_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "mdsd")


def main():
    if not os.path.isfile(_PROGRAM):
        print(f"mdsd: error: this mdsd package has no bundled program ({_PROGRAM} is missing): "
              "it was not installed from a wheel; run the program of a build "
              "(build/release/mdsd) or `make install`", file=sys.stderr)
        return 1
    if not os.access(_PROGRAM, os.X_OK):
        print(f"mdsd: error: {_PROGRAM} is not executable (the wheel was unpacked without its "
              "file modes); reinstall it with pip", file=sys.stderr)
        return 1
    try:
        sys.stdout.flush()
    except OSError:
        pass
    os.execv(_PROGRAM, ["mdsd"] + sys.argv[1:])
    return 1  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main())
