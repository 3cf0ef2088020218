"""Print a pip requirements file pinning every wheel in a folder by name, version and SHA-256.

Used by build_wheelhouse.sh so install_offline.sh can run ``pip --require-hashes --no-index``.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path


def main(folder: str) -> None:
    for wheel in sorted(Path(folder).glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        print(f"{name.replace('_', '-')}=={version} --hash=sha256:{digest}")


if __name__ == "__main__":
    main(sys.argv[1])
