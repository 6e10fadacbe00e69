"""``python -m kubesched``: the ``kubesched`` command."""

from kubesched.cli import main

if __name__ == "__main__":
    main(prog_name="kubesched")
