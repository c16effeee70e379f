"""Fetching a knowledge source's web page without opening the server's
network to whoever adds the URL (spec 000 §9.1 step 1 "url: httpx +
BeautifulSoup", issue 13 point 2).

What is checked, on every hop (redirects are followed here, one at a time,
never by httpx):

- the scheme is http or https;
- the host name is not one of the internal names (``localhost``,
  ``*.localhost``, ``*.internal`` such as ``metadata.google.internal``,
  ``*.local``, ``metadata``, ``instance-data``);
- every address the name resolves to (``socket.getaddrinfo``, bounded by
  the timeout) is global: no private (RFC 1918), loopback, link-local
  (169.254.0.0/16 with the cloud metadata address 169.254.169.254,
  fe80::/10), unique-local (fc00::/7), shared (100.64.0.0/10), multicast,
  reserved or unspecified address, also when written as an IPv4-mapped,
  6to4 or NAT64 IPv6 address or as a decimal/hex IPv4 number;
- the connection goes to the address that was checked (the request URL
  carries that IP; the ``Host`` header and the TLS server name, which the
  certificate is verified against, carry the name), so a DNS answer that
  changes between the check and the connection (DNS rebinding) is not used;
- no proxy from the environment is used (it would connect on our behalf);
- the body is streamed and cut at ``max_bytes`` (after decompression);
- the whole fetch, redirects included, ends by ``timeout`` seconds: the
  deadline is checked between reads, and each connect or read waits at
  most what was left of it when the hop began, so the worst case is under
  twice ``timeout``.

Pure Python, no Odoo import.
"""
from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

import httpx

_REDIRECTS = (301, 302, 303, 307, 308)
_INTERNAL_NAMES = ("localhost", "metadata", "instance-data", "metadata.google.internal")
_INTERNAL_SUFFIXES = (".localhost", ".internal", ".local", ".localdomain", ".home.arpa")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_USER_AGENT = "agentic_ai knowledge fetcher (Odoo)"


@dataclass(frozen=True)
class Fetched:
    """A fetched page: ``url`` as asked, ``final_url`` after redirects,
    ``content_type`` the response's Content-Type header ("" when absent),
    ``data`` the body (at most ``max_bytes`` bytes, decompressed)."""

    url: str
    final_url: str
    content_type: str
    data: bytes


class UrlRefused(Exception):
    """The URL (or a redirect) points where the server must not go: a scheme
    other than http(s), an internal name or a non-global address."""


class UrlFetchError(Exception):
    """The page could not be fetched: name not resolved, connection or TLS
    failure, HTTP error status, too many redirects, too large, too slow."""


class _ConnectFailed(UrlFetchError):
    """No connection to one address: the next address of the name is tried."""


def fetch_url(url: str, *, max_bytes: int = 10_000_000, timeout: float = 20.0, max_redirects: int = 5,
              allow_private: bool | Collection[tuple[str, int]] = False) -> Fetched:
    """GET ``url`` under the checks of this module's docstring.

    ``max_bytes``: body limit in bytes; ``timeout``: seconds for the whole
    fetch; ``max_redirects``: redirects followed at most. ``allow_private``
    exists for tests against a local server only: True lifts the name and
    address checks, a collection of ``(host, port)`` pairs lifts them for
    those endpoints only (so a redirect elsewhere is still checked).

    Raises UrlRefused or UrlFetchError.
    """
    deadline = time.monotonic() + timeout
    current = _parse(url)
    with httpx.Client(follow_redirects=False, trust_env=False, verify=True) as client:
        for _hop in range(max_redirects + 1):
            addresses = _checked_addresses(current, allow_private, deadline, timeout)
            for index, address in enumerate(addresses):
                try:
                    response = _fetch_hop(client, current, address, deadline, timeout, max_bytes)
                    break
                except _ConnectFailed:
                    if index == len(addresses) - 1:
                        raise
            if isinstance(response, Fetched):
                return Fetched(url, response.final_url, response.content_type, response.data)
            current = _parse(str(current.join(response)))
    raise UrlFetchError(f"more than {max_redirects} redirects from {url}")


def _parse(url: str) -> httpx.URL:
    """``url`` parsed, refused unless http(s) with a host."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise UrlRefused(f"not a valid URL: {url!r} ({exc})") from exc
    if parsed.scheme not in ("http", "https"):
        raise UrlRefused(f"only http and https URLs can be fetched, not {parsed.scheme or 'no scheme'}: ({url!r})")
    if not parsed.host:
        raise UrlRefused(f"the URL has no host: {url!r}")
    return parsed


def _allowed_endpoint(url: httpx.URL, allow_private) -> bool:
    if allow_private is True:
        return True
    if not allow_private:
        return False
    return (url.host.lower(), url.port or (443 if url.scheme == "https" else 80)) in {
        (str(host).lower(), int(port)) for host, port in allow_private}


def _checked_addresses(url: httpx.URL, allow_private, deadline: float, timeout: float) -> list[str]:
    """The IPs to connect to for ``url``'s host, in the resolver's order,
    after the checks (all must pass); raises
    UrlRefused for an internal name or address, UrlFetchError when the name
    does not resolve in time."""
    host = url.host.lower().rstrip(".")
    allowed = _allowed_endpoint(url, allow_private)
    if not allowed and (host in _INTERNAL_NAMES or host.endswith(_INTERNAL_SUFFIXES)):
        raise UrlRefused(f"{host} is an internal name")
    port = url.port or (443 if url.scheme == "https" else 80)
    infos = _resolve(host, port, deadline, timeout)
    addresses = list(dict.fromkeys(info[4][0] for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)))
    if not addresses:
        raise UrlFetchError(f"{host} has no IPv4 or IPv6 address")
    if not allowed:
        for address in addresses:
            reason = address_refusal(address)
            if reason:
                raise UrlRefused(f"{host} resolves to {address}, {reason}")
    return addresses


def _resolve(host: str, port: int, deadline: float, timeout: float):
    """``socket.getaddrinfo`` bounded by the deadline (the system resolver
    has its own, longer timeouts)."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="url-fetch-dns")
    try:
        future = pool.submit(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM)
        return future.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout as exc:
        raise UrlFetchError(f"resolving {host} took longer than {timeout:g} s") from exc
    except (OSError, UnicodeError) as exc:
        raise UrlFetchError(f"cannot resolve {host}: {exc}") from exc
    finally:
        pool.shutdown(wait=False)


def address_refusal(address: str) -> str:
    """Why the server must not connect to ``address`` (an IPv4 or IPv6
    literal, scope id allowed), or "" when it is a global unicast address.
    IPv4 written inside IPv6 (mapped, 6to4 RFC 3056, NAT64 RFC 6052) is
    judged as IPv4. The ranges are those of the IANA special-purpose
    registries (RFC 6890) as Python's ``ipaddress`` knows them."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "not an IP address"
    if ip.version == 6:
        if ip.ipv4_mapped:
            ip = ip.ipv4_mapped
        elif ip.sixtofour:
            ip = ip.sixtofour
        elif ip in _NAT64:
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    for attribute, label in (("is_unspecified", "an unspecified address"), ("is_loopback", "a loopback address"),
                             ("is_link_local", "a link-local address (cloud metadata lives there)"),
                             ("is_multicast", "a multicast address"), ("is_private", "a private address"),
                             ("is_reserved", "a reserved address")):
        if getattr(ip, attribute):
            return label
    if not ip.is_global:
        return "not a global address"
    return ""


def _fetch_hop(client: httpx.Client, url: httpx.URL, address: str, deadline: float, timeout: float,
               max_bytes: int) -> Fetched | str:
    """One request to ``address`` for ``url``: the Fetched page, or the
    Location of a redirect (a string, maybe relative)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise UrlFetchError(f"fetching {url} took longer than {timeout:g} s")
    host_header = url.netloc.decode("ascii")
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    headers = {"Host": host_header, "User-Agent": _USER_AGENT,
               "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"}
    try:
        with client.stream("GET", url.copy_with(host=address), headers=headers, extensions=extensions,
                           timeout=httpx.Timeout(remaining)) as response:
            if response.status_code in _REDIRECTS:
                location = response.headers.get("location")
                if not location:
                    raise UrlFetchError(f"{url} redirects without a Location")
                return location
            if response.status_code >= 400:
                raise UrlFetchError(f"{url} answered HTTP {response.status_code} {response.reason_phrase}")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_bytes:
                raise UrlFetchError(f"{url} is larger than {max_bytes:,} bytes ({int(declared):,})")
            body = bytearray()
            for piece in response.iter_bytes():
                body += piece
                if len(body) > max_bytes:
                    raise UrlFetchError(f"{url} is larger than {max_bytes:,} bytes")
                if time.monotonic() > deadline:
                    raise UrlFetchError(f"fetching {url} took longer than {timeout:g} s")
            return Fetched(str(url), str(url), response.headers.get("content-type", ""), bytes(body))
    except httpx.TimeoutException as exc:
        raise UrlFetchError(f"fetching {url} took longer than {timeout:g} s") from exc
    except httpx.ConnectError as exc:
        raise _ConnectFailed(f"cannot connect to {url} at {address}: {exc}") from exc
    except httpx.HTTPError as exc:
        raise UrlFetchError(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from exc
