"""Links and handles in a text: one definition for every part of Privet that looks for them.

A link is an address, not what a text is about. Four places meet them, each for its own reason, and all of them
read the patterns here:

* the keyword extractors and phrase discovery remove links, handles and HTML markup from a unit's text before
  choosing its words (:func:`without_links`, in ``keywords``, ``vocabulary`` and ``phrases``): their letters ("ms", "ly",
  "rt", the "br" of "<br />") would otherwise become topics no writer can write about;
* the junk rule (``core.common.junk``) counts a written document holding a link as junk: the public writer invents them;
* public realisation (``core.methods.dp_synrag.write.realisation``) drops a written sentence holding one;
* RPSG's personal-information masking (``core.methods.rpsg.pii``) replaces each address with a scheme or ``www.``
  by a placeholder (``SCHEMED_LINK``; an e-mail address, domain included, is its e-mail recogniser's).

A link here: an address with a scheme or ``www.`` ("https://…", "ftp://…", "www.cdc.gov/ebola"), a dotted name with a
path ("bit.ly/abc", "nyti.ms/1x"), or a dotted name ending in a common web suffix ("amazon.com", "index.html"). A
link's last character is never a sentence's closing punctuation ("see www.example.com." keeps its full stop).
A handle: "@nytimes", and a retweet's "RT @nytimes:".
"""

from __future__ import annotations

import re

_TAIL = r"[^\s<>\"']*[^\s<>\"'.,;:!?)\]]"  # the rest of an address, without the punctuation that ends a sentence
_WEB_SUFFIX = r"(?:com|org|net|gov|edu|html?|php)"

_SCHEMED = r"\b(?:https?://|ftp://|www\.)" + _TAIL

SCHEMED_LINK = re.compile(_SCHEMED, re.IGNORECASE)  # only an address with a scheme or www. (an e-mail's domain is not)
LINK = re.compile(
    _SCHEMED
    + r"|\b[\w-]+(?:\.[\w-]*[^\W\d_][\w-]*)+/(?:" + _TAIL + r")?"  # a dotted name with a path ("8.5/10" is not)
    + r"|\b[\w-]+(?:\.[\w-]+)*\." + _WEB_SUFFIX + r"\b",       # a dotted name with a web suffix
    re.IGNORECASE,
)
HANDLE = re.compile(r"\bRT\s*@\w+:?|(?<![\w.])@\w+", re.IGNORECASE)
MARKUP = re.compile(r"</?[a-z][a-z0-9]*\b[^<>]*>|&(?:[a-z]+|#\d+|#x[0-9a-f]+);", re.IGNORECASE)  # "<br />", "&amp;"


def has_link(text: str) -> bool:
    """Whether ``text`` holds a link."""
    return LINK.search(text) is not None


def without_links(text: str) -> str:
    """``text`` with its links, @handles, retweet marks and HTML markup ("<br />", "&amp;": web reviews keep it)
    replaced by a space (a function of the text alone)."""
    return LINK.sub(" ", HANDLE.sub(" ", MARKUP.sub(" ", text)))
