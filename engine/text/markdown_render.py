"""The model's Markdown as inert HTML for the chat (issue 11 point 3, case
BR-32): everything a model writes is treated as written by an attacker.

``render_markdown(text) -> str`` runs three steps:

1. markdown-it-py (CommonMark, plus its ``table`` and ``strikethrough``
   rules) with ``html: False``: raw HTML in the text is escaped and shown as
   text; its ``validateLink`` refuses ``javascript:``, ``vbscript:``,
   ``file:`` and ``data:`` links (only ``data:image/{gif,png,jpeg,webp}``
   images pass), so such a link stays literal text
   (https://markdown-it-py.readthedocs.io/en/latest/security.html);
2. Odoo's own sanitizer, ``odoo.tools.mail.html_sanitize`` with
   ``sanitize_attributes`` (lxml's safe attribute list: no ``on*``) and
   ``strip_style`` (no ``style`` tag or attribute); it kills ``script``,
   ``iframe``, ``object``... and ``javascript:`` URLs;
3. a pass over the sanitized tree with lxml (``_harden``):

   - an ``<img>`` from a foreign origin (``http(s)://host/...`` or
     ``//host/...``) becomes ``<button type="button"
     class="o_agentic_ai_image_placeholder" data-src=URL data-alt=ALT>Load
     image from HOST</button>``: nothing is fetched until the user clicks
     (the chat client turns it into an image then); a relative image is
     kept only under Odoo's file routes ``/web/image/`` and
     ``/web/content/``, any other relative path becomes a placeholder too
     (an image of ``/web/session/logout`` would otherwise log the reader
     out); ``data:`` and other schemes are dropped;
   - a link keeps its ``href`` only when it is ``http(s)``, ``mailto:`` or
     a path on this Odoo under ``/odoo`` (records, menus) or its file
     routes, with no ``.``/``..`` segment (the element is unwrapped
     otherwise, its text stays): a link to ``/web/session/logout`` or
     ``/web/database/manager`` written into a record is never clickable;
     links to another host get ``target="_blank" rel="noopener noreferrer
     nofollow"``; a link to this Odoo written with its host (the caller's
     ``local_hosts``: ``https://erp.example.com/web/session/logout``) is
     judged as a path on this Odoo, and so is an image there; a path with
     an ``action-…`` segment (``/odoo/action-…``, which may run a server
     action when opened) is never kept (issue 23 point 7);
   - a link to an Odoo 19 record URL ``/odoo/<model.name>/<id>`` gets
     ``class="o_agentic_ai_record_link" data-res-model data-res-id`` so the
     client opens the form with the action service;
   - classes are those this module sets (and ``language-*`` on code), and
     Odoo's mail-quote markers are removed.

Pure function of its text (no ``env``); a 20,000-character answer takes about
70 ms."""
from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from lxml import etree, html
from markdown_it import MarkdownIt

from odoo.tools.mail import html_sanitize

EXTERNAL_REL = "noopener noreferrer nofollow"
IMAGE_PLACEHOLDER_CLASS = "o_agentic_ai_image_placeholder"
RECORD_LINK_CLASS = "o_agentic_ai_record_link"
LOCAL_IMAGE_PREFIXES = ("/web/image/", "/web/content/")  # Odoo's read-only file routes
LOCAL_LINK_PREFIXES = ("/odoo/", *LOCAL_IMAGE_PREFIXES)  # Odoo 19's web client URLs and its files
# Odoo 19's record URL: /odoo/<model>/<id>; a segment holding a dot is a model name
RECORD_PATH_RE = re.compile(r"^/odoo/(?P<model>[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)/(?P<id>[1-9][0-9]{0,9})/?$")
CODE_CLASS_RE = re.compile(r"^language-[\w+#.-]{1,40}$")
UNSAFE_URL_CHARS_RE = re.compile(r"[\x00-\x20\x7f\\]")  # browsers strip or re-read these: /\evil.com is //evil.com

_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def _default_image_label(host: str) -> str:
    return f"Load image from {host}"


def render_markdown(text: str | None, image_label: Callable[[str], str] = _default_image_label,
                    local_hosts: frozenset[str] = frozenset()) -> str:
    """``text`` (Markdown the model wrote) as sanitized HTML (a fragment,
    ``""`` for empty text). ``image_label(host)`` is the placeholder's
    button text for an image from ``host`` (English by default; the caller
    passes a translated one); ``local_hosts`` the lower-case host names
    this Odoo answers on (its links and images there are judged as its own
    paths). See the module docstring for what is kept."""
    if not text or not text.strip():
        return ""
    rendered = _markdown.render(text)
    sanitized = html_sanitize(rendered, silent=True, sanitize_attributes=True, strip_style=True,
                              strip_classes=False)
    if not sanitized:
        return ""
    root = html.fragment_fromstring(str(sanitized), create_parent="div")
    _harden(root, image_label, local_hosts)
    return (html.tostring(root, encoding="unicode", method="html")
            .removeprefix("<div>").removesuffix("</div>"))


def _harden(root, image_label: Callable[[str], str], local_hosts: frozenset[str] = frozenset()) -> None:
    for element in list(root.iter(etree.Element)):
        for name in [name for name in element.attrib if name.startswith("data-o-mail-quote")]:
            del element.attrib[name]
        if element.tag == "code" and CODE_CLASS_RE.match(element.get("class", "")):
            pass
        elif "class" in element.attrib:
            del element.attrib["class"]
    for image in list(root.iter("img")):
        _image(image, image_label, local_hosts)
    for link in list(root.iter("a")):
        _link(link, local_hosts)


def _url_parts(url: str):
    """``(scheme, host, path)`` of ``url`` lower-cased, or None when it
    holds characters a browser would strip or re-read (spaces, controls,
    backslashes) or cannot be parsed."""
    if not url or UNSAFE_URL_CHARS_RE.search(url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return None
    return parts.scheme.lower(), host.lower(), parts.path


def _image(image, image_label, local_hosts: frozenset[str] = frozenset()) -> None:
    src = image.get("src", "")
    alt = image.get("alt", "")
    parts = _url_parts(src)
    if parts is None:
        return _remove(image)
    scheme, host, path = parts
    if host and host in local_hosts and not path.startswith(LOCAL_IMAGE_PREFIXES):
        return _remove(image)  # this Odoo's own route, not a file: loading it could change state
    if not scheme and not host and path.startswith(LOCAL_IMAGE_PREFIXES):
        image.attrib.clear()
        image.set("src", src)
        image.set("alt", alt)
        return None
    if scheme not in ("", "http", "https") or (scheme and not host):
        return _remove(image)  # data:, blob:, ftp:, ...
    placeholder = etree.Element("button", {"type": "button", "class": IMAGE_PLACEHOLDER_CLASS,
                                           "data-src": src, "data-alt": alt})
    placeholder.text = image_label(host or path)
    placeholder.tail = image.tail
    image.getparent().replace(image, placeholder)
    return None


def _link(link, local_hosts: frozenset[str] = frozenset()) -> None:
    href = link.get("href")
    parts = _url_parts(href) if href else None
    if parts is None or parts[0] not in ("", "http", "https", "mailto") or (parts[0] in ("http", "https")
                                                                            and not parts[1]):
        link.drop_tag()  # an inert link is its text
        return
    scheme, host, path = parts
    if ((not scheme and not host) or (host and host in local_hosts)) and not _local_link(path):
        link.drop_tag()
        return
    title = link.get("title")
    link.attrib.clear()
    link.set("href", href)
    if title:
        link.set("title", title)
    if host:
        link.set("target", "_blank")
        link.set("rel", EXTERNAL_REL)
        return
    record = RECORD_PATH_RE.match(path) if not scheme else None
    if record and not urlsplit(href).query:
        link.set("class", RECORD_LINK_CLASS)
        link.set("data-res-model", record["model"])
        link.set("data-res-id", record["id"])


def _local_link(path: str) -> bool:
    """Whether ``path`` (of a link without scheme or host) is a page of
    Odoo's web client or one of its files; browsers resolve ``..`` (also
    percent-encoded) before the request, so no such segment is allowed."""
    if path != "/odoo" and not path.startswith(LOCAL_LINK_PREFIXES):
        return False
    segments = [unquote(segment) for segment in path.split("/")]
    return not any(segment in (".", "..") or segment.startswith("action-") for segment in segments)


def _remove(element) -> None:
    """Remove ``element`` keeping the text that followed it."""
    parent = element.getparent()
    tail = element.tail or ""
    previous = element.getprevious()
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)
