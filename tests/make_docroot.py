#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Create the docroot the HTTP integration tests (tests/http_test.py) run on.

    tests/make_docroot.py DOCROOT

Creates DOCROOT (0755) with a deterministic set of files (same names, bytes
and mtimes on every run), DOCROOT/../outside/secret.txt (a marker that no
response may ever contain) and DOCROOT/../manifest.json describing it all.
An existing DOCROOT and DOCROOT/../outside are deleted first. Python 3.9+
standard library only.
"""

import gzip
import hashlib
import json
import os
import random
import shutil
import sys

# Every regular file gets a fixed mtime, each a different one, so a server
# that mixes up files shows it in Last-Modified and ETag.
BASE_MTIME = 1700000000         # Tue, 14 Nov 2023 22:13:20 GMT
MTIME_STEP = 3607

BIG_SIZE = 10 * 1024 * 1024
BIG_SEED = 0x6B776562           # "kweb"

SECRET_MARKER = "KWEB-OUTSIDE-SECRET-5c1e0b7a2f9d4e86"
UTF8_NAME = "h\u00e9llo-w\u00f6rld-\u65e5\u672c.txt"

SMALL = (b"kweb small.txt: 0123456789 abcdefghijklmnopqrstuvwxyz "
         b"ABCDEFGHIJKLMNOPQRSTUVWXYZ\n")


def text(name):
    return ("kweb test file %s\nline two\r\nline three\n" % name).encode()


def binary(name, size, magic=b""):
    """magic + deterministic bytes (all 256 values, NUL, CR, LF among them)."""
    rnd = random.Random("kweb:" + name)
    return magic + rnd.randbytes(size - len(magic))


def html(title):
    return ("<!DOCTYPE html>\n<html><head><title>%s</title></head>"
            "<body><p>%s</p></body></html>\n" % (title, title)).encode()


# (relative path, content): one file per MIME extension of the contract,
# plus the files the path, range and connection tests use.
FILES = [
    ("index.html", html("kweb docroot index")),
    ("a.html", html("a.html")),
    ("a.htm", html("a.htm")),
    ("a.css", b"body { color: #123456; }\n/* a.css */\n"),
    ("a.js", b"console.log('a.js');\n"),
    ("a.mjs", b"export const a = 'a.mjs';\n"),
    ("a.json", b'{"file": "a.json", "n": [1, 2, 3]}\n'),
    ("a.xml", b'<?xml version="1.0"?>\n<file name="a.xml"/>\n'),
    ("a.txt", text("a.txt")),
    ("a.svg", b'<svg xmlns="http://www.w3.org/2000/svg" width="1" '
              b'height="1"><!-- a.svg --></svg>\n'),
    ("a.png", binary("a.png", 1234, b"\x89PNG\r\n\x1a\n")),
    ("a.jpg", binary("a.jpg", 2345, b"\xff\xd8\xff\xe0")),
    ("a.jpeg", binary("a.jpeg", 2346, b"\xff\xd8\xff\xe0")),
    ("a.gif", binary("a.gif", 345, b"GIF89a")),
    ("a.webp", binary("a.webp", 456, b"RIFF\x00\x00\x00\x00WEBP")),
    ("a.avif", binary("a.avif", 567, b"\x00\x00\x00\x1cftypavif")),
    ("a.ico", binary("a.ico", 678, b"\x00\x00\x01\x00")),
    ("a.wasm", binary("a.wasm", 789, b"\x00asm\x01\x00\x00\x00")),
    ("a.woff", binary("a.woff", 890, b"wOFF")),
    ("a.woff2", binary("a.woff2", 901, b"wOF2")),
    ("a.pdf", b"%PDF-1.4\n% a.pdf\n" + binary("a.pdf", 1012)),
    ("a.mp4", binary("a.mp4", 1123, b"\x00\x00\x00\x18ftypmp42")),
    ("a.webm", binary("a.webm", 1234, b"\x1a\x45\xdf\xa3")),
    ("UPPER.PNG", binary("UPPER.PNG", 1345, b"\x89PNG\r\n\x1a\n")),
    ("noext", text("noext")),
    ("a.unknownext", text("a.unknownext")),
    (".dotfile", text(".dotfile")),
    ("empty.txt", b""),
    ("small.txt", SMALL),
    ("hello world.txt", text("hello world.txt")),
    (UTF8_NAME, text(UTF8_NAME)),
    ("dir/index.html", html("dir/index.html")),
    ("dir/page.txt", text("dir/page.txt")),
    ("dir/sub/index.html", html("dir/sub/index.html")),
    ("noindex/file.txt", text("noindex/file.txt")),
    ("privindex/index.html", html("privindex/index.html")),
    ("private.txt", text("private.txt")),
    ("private/open.txt", text("private/open.txt")),     # 0644 in a 0700 dir
    ("private/index.html", html("private/index.html")),
]

# Not world-readable (no S_IROTH): the server must answer 403.
PRIVATE = {"private.txt": 0o600, "privindex/index.html": 0o600}

# The identity kweb opens files as (user=, group=; default 65534, nobody
# and nogroup): what it may read is served, as nginx serves what its
# workers may open. rel: (uid, gid, mode); the rest are root's.
OWNED = {
    "owned/root0640.txt": (0, 0, 0o640),
    "owned/nobody0600.txt": (65534, 65534, 0o600),
    "owned/uid1000.txt": (1000, 1000, 0o600),
    "owned/gid1000.txt": (0, 1000, 0o640),
    # The tests load kweb with this supplementary group: never the identity's.
    "owned/gid4242.txt": (0, 4242, 0o640),
}
PRIVATE.update({rel: mode for rel, (_, _, mode) in OWNED.items()})
FILES += [(rel, text(rel)) for rel in sorted(OWNED)]

# Precompressed files beside the files they compress (served for NAME to
# clients that accept br or gzip). The .gz are real gzip; the .br are
# stand-in bytes: servers never decode them, and Python has no brotli.
PRE_JS = b"// pre/app.js\n" + b"console.log('precompressed');\n" * 40


def gz(data):
    return gzip.compress(data, mtime=0)


def br(data):
    return b"stand-in brotli of %d bytes\n" % len(data) + data[:64]


PRE_CSS = b"body { margin: 0; }\n" * 30
PRE_SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><!-- pre -->' + \
    b"<g/>" * 50 + b"</svg>\n"
PRE_HTML = html("pre/dir/index.html")
PRE_PRIV = b"// pre/priv.js\n" * 20
PRECOMPRESSED = [
    ("pre/app.js", PRE_JS), ("pre/app.js.gz", gz(PRE_JS)),
    ("pre/app.js.br", br(PRE_JS)),
    ("pre/only-gz.css", PRE_CSS), ("pre/only-gz.css.gz", gz(PRE_CSS)),
    ("pre/only-br.svg", PRE_SVG), ("pre/only-br.svg.br", br(PRE_SVG)),
    ("pre/dir/index.html", PRE_HTML), ("pre/dir/index.html.gz", gz(PRE_HTML)),
    # Variants kweb's identity may not read, or not files: none.
    ("pre/priv.js", PRE_PRIV), ("pre/priv.js.gz", gz(PRE_PRIV)),
    ("pre/priv.js.br", br(PRE_PRIV)),
    ("pre/dirvar.js", PRE_PRIV), ("pre/dirvar.js.gz/file", PRE_PRIV),
    # Compressed files asked for by their own names: no coding, their type.
    ("pre/plain.txt.gz", gz(SMALL)),
    # NAME.gz (and NAME.br) without NAME: served for NAME all the same.
    ("pre/gzonly.txt.gz", gz(PRE_CSS)),
    ("pre/nobase.js.gz", gz(PRE_PRIV)), ("pre/nobase.js.br", br(PRE_PRIV)),
]
FILES += PRECOMPRESSED
PRIVATE.update({"pre/priv.js.gz": 0o600, "pre/priv.js.br": 0o600})

# Error pages (a listener's error-pages, nginx's error_page): each with
# its own type.
ERROR_PAGES = [
    ("errors/404.html", html("errors/404.html: no such page")),
    ("errors/403.txt", text("errors/403.txt")),
    ("errors/416.html", html("errors/416.html: no such range")),
]
FILES += ERROR_PAGES

# Virtual hosts (a listener with vhosts on, docroot vhosts/): a directory
# per host, and the default's for the others.
VHOSTS = [
    ("vhosts/a.example/index.html", html("vhosts/a.example")),
    ("vhosts/a.example/only-a.txt", text("vhosts/a.example/only-a.txt")),
    ("vhosts/b.example/index.html", html("vhosts/b.example")),
    ("vhosts/b.example/sub/index.html", html("vhosts/b.example/sub")),
    ("vhosts/default/index.html", html("vhosts/default")),
    ("vhosts/default/only-default.txt",
     text("vhosts/default/only-default.txt")),
]
FILES += VHOSTS

# Directories only root may search: what they hold is 403, even if missing.
LOCKED_DIRS = {"private": 0o700}

SYMLINKS = [
    ("link-in.txt", "small.txt"),
    ("link-dir", "dir"),
    ("link-abs-out", "/etc/passwd"),
    ("link-rel-out", "../outside/secret.txt"),
    ("link-dangling", "nope.txt"),
]

FIFOS = ["fifo"]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def write(path, data, mode, mtime):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
    os.utime(path, (mtime, mtime))


def build(docroot):
    docroot = os.path.abspath(docroot)
    parent = os.path.dirname(docroot)
    outside = os.path.join(parent, "outside")
    for d in (docroot, outside):
        if os.path.lexists(d):
            shutil.rmtree(d)
    os.makedirs(docroot)
    os.makedirs(outside)
    os.chmod(docroot, 0o755)
    os.chmod(outside, 0o755)

    files = {}
    contents = FILES + [("big.bin", random.Random(BIG_SEED).randbytes(BIG_SIZE))]
    for i, (rel, data) in enumerate(contents):
        path = os.path.join(docroot, rel)
        d = os.path.dirname(path)
        if not os.path.isdir(d):
            os.makedirs(d)
        mtime = BASE_MTIME + i * MTIME_STEP
        mode = PRIVATE.get(rel, 0o644)
        write(path, data, mode, mtime)
        if rel in OWNED:
            os.chown(path, OWNED[rel][0], OWNED[rel][1])
        st = os.stat(path)
        files[rel] = {"type": "file", "size": len(data), "mtime": mtime,
                      "mode": "%o" % mode, "sha256": sha256(data),
                      "uid": st.st_uid, "gid": st.st_gid}

    # Directories world-readable and searchable, whatever the umask
    # was (before the symlinks exist, so that none is followed).
    for dirpath, dirnames, _ in os.walk(docroot):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
        rel = os.path.relpath(dirpath, docroot)
        if rel != ".":
            files[rel] = {"type": "dir"}
    for rel, mode in LOCKED_DIRS.items():
        os.chmod(os.path.join(docroot, rel), mode)
        files[rel]["mode"] = "%o" % mode

    for rel, target in SYMLINKS:
        os.symlink(target, os.path.join(docroot, rel))
        files[rel] = {"type": "symlink", "target": target}

    for rel in FIFOS:
        path = os.path.join(docroot, rel)
        os.mkfifo(path)
        os.chmod(path, 0o644)
        files[rel] = {"type": "fifo"}

    secret = ("%s\nnever served by kweb\n" % SECRET_MARKER).encode()
    secret_path = os.path.join(outside, "secret.txt")
    write(secret_path, secret, 0o644, BASE_MTIME)

    manifest = {
        "docroot": docroot,
        "secret_marker": SECRET_MARKER,
        "utf8_name": UTF8_NAME,
        "files": files,
    }
    with open(os.path.join(parent, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True, ensure_ascii=True)
        f.write("\n")
    return manifest


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write("usage: %s DOCROOT\n" % argv[0])
        return 2
    m = build(argv[1])
    nfiles = sum(1 for f in m["files"].values() if f["type"] == "file")
    print("%s: %d files, manifest %s" % (
        m["docroot"], nfiles,
        os.path.join(os.path.dirname(m["docroot"]), "manifest.json")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
