"""The self-contained bundle's identity: version, commit and content hash (``bundle.json``).

``installer/make_bundle.sh`` writes two files into the bundle's internal folder after PyInstaller ran:

* ``bundle-files.sha256``: ``sha256sum`` lines of every file of the bundle (except these two);
* ``bundle.json``: the Privet version, the git commit it was built from, the build date, the
  platform, and ``content_sha256``, the SHA-256 of ``bundle-files.sha256``.

``content_sha256`` therefore names the exact bytes of the installed application, and anyone can
check it with standard tools (``sha256sum -c``; see INSTALL.txt). The certificate's software
section records it for runs made from the bundle. From source, ``bundle_info()`` is ``None``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from core.common import paths
from core.common.errors import PrivetError

INFO_FILE = "bundle.json"
FILES_MANIFEST = "bundle-files.sha256"


@dataclass(frozen=True)
class BundleInfo:
    version: str
    commit: str
    built_at: str
    platform: str
    content_sha256: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def summary(self) -> str:
        """One line for ``privet --version`` and the certificate rendering."""
        return (
            f"bundle {self.platform}, built {self.built_at}, commit {self.commit or 'unknown'}, "
            f"content SHA-256 {self.content_sha256}"
        )


def bundle_info() -> BundleInfo | None:
    """The running bundle's identity, or ``None`` when Privet runs from source or a wheel."""
    folder = paths.bundle_dir()
    if folder is None:
        return None
    path = folder / INFO_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return BundleInfo(**{name: str(data[name]) for name in BundleInfo.__dataclass_fields__})
    except (OSError, ValueError, KeyError, TypeError):
        raise PrivetError(
            f"This Privet bundle has no readable {INFO_FILE} ({path}).",
            "Unpack the archive again (see INSTALL.txt) and check its SHA-256; the bundle must not be modified.",
        ) from None


def version_text(version: str) -> str:
    """``privet --version``: the version, plus the bundle's identity when running from the bundle."""
    try:
        info = bundle_info()
    except PrivetError:
        return f"privet {version} (bundle identity missing)"
    return f"privet {version}" if info is None else f"privet {version} ({info.summary()})"
