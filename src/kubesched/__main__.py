"""``python -m kubesched``: the ``kubesched`` command."""

from kubesched.cli import run

if __name__ == "__main__":
    run(prog_name="kubesched")
