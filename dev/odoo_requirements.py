"""Print Odoo's requirements.txt with every marker evaluated as on Python 3.12.

Odoo 19 pins old source-only releases for Python 3.11 (cbor2 5.4.2 needs
pkg_resources at build time) while its Python 3.12 pins all ship wheels, so the
set-up installs the 3.12 pins on any Python >= 3.10. psycopg2 is swapped for
psycopg2-binary (no libpq headers needed) and python-ldap is left out (needs
libldap headers; only auth_ldap uses it).

Usage: python dev/odoo_requirements.py <odoo>/requirements.txt > out.txt
"""
import sys
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement

SKIP = {"python-ldap", "pypiwin32", "rl-renderpm"}
RENAME = {"psycopg2": "psycopg2-binary"}


def main(path):
    env = {"python_version": "3.12", "python_full_version": "3.12.0", "sys_platform": sys.platform}
    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        if req.marker and not Marker(str(req.marker)).evaluate(env):
            continue
        name = req.name.lower()
        if name in SKIP:
            continue
        print(f"{RENAME.get(name, req.name)}{req.specifier}")


if __name__ == "__main__":
    main(sys.argv[1])
