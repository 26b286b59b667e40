#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Differential test: kweb against nginx configured to serve the same way.

    diff_test.py --host H --port P --docroot D [--nginx-port 8083]
                 [--kwebctl PATH [--listener-port 8097]]

D is a docroot made by tests/make_docroot.py, served by kweb on H:P and
by the reference server of tests/nginx/backend.conf.in on H:8083
(gzip_static, brotli_static and gzip_vary on, kweb's MIME table,
expires and add_header Cache-Control in the locations CACHE_RULES
mirrors, and the error_page lines of ERROR_PAGES). With --kwebctl, the
test adds a kweb listener of its own on --listener-port for D with those
rules and pages (a listener's own settings), compares that one, and
deletes it at the end. Both get the same requests, one
connection each: every servable file, directory and missing path, with
and without each Accept-Encoding of ENCODINGS, GET and HEAD, then ranges
and conditionals on the precompressed files with the validators the first
answers gave. For each request the status, the body bytes and the fields
of COMPARED must be the same; a difference is a failure unless KNOWN
lists it, as docs/behaviour.md does, with its reason.

Error pages differ by their signature only ("nginx" and "kweb", and
nginx's older reason for 416): the reference's is read as kweb's. Python 3.9+ standard library only.
"""

import email.utils
import ipaddress
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taplib  # noqa: E402
from httplib_raw import Connection, format_host  # noqa: E402

TESTS = taplib.Suite()
CFG = None

COMPARED = ("Content-Type", "Content-Length", "Content-Encoding", "Vary",
            "Cache-Control", "Expires", "Location", "Content-Range", "ETag",
            "Last-Modified", "Accept-Ranges")

ENCODINGS = [None, "gzip", "br", "gzip, deflate, br, zstd", "deflate",
             "br;q=0, gzip", "gzip;q=0", "GZIP", "identity", "", "x-gzip",
             "*"]

# The reference's locations, as kweb Cache-Control rules: nginx's regex
# locations are kweb's extension rules (they win over prefixes), its
# "expires N" is max-age=N with Expires, and add_header adds a directive.
CACHE_RULES = (".css=max-age=604800;.svg=max-age=604800;.html=no-cache;"
               "/pre/=max-age=3600, public")
# Its error_page lines, as kweb error pages.
ERROR_PAGES = "404=/errors/404.html;403=/errors/403.txt;416=/errors/416.html"

# What a precompressed file's answer may differ in: kweb honours Range on
# it and says Accept-Ranges, nginx's gzip_static and brotli_static do not.
PRE_RANGE = {"status", "Accept-Ranges", "Content-Range", "Content-Length",
             "body", "Content-Type", "Content-Encoding", "ETag",
             "Last-Modified", "Cache-Control", "Expires", "Vary"}


def siblings(target):
    """{".gz": kind, ".br": kind} of target's file (a directory's
    index.html): "file", "other" or None."""
    rel = target.lstrip("/")
    if rel == "" or rel.endswith("/"):
        rel += "index.html"
    out = {}
    for sfx in (".gz", ".br"):
        path = os.path.join(CFG.docroot, rel + sfx)
        out[sfx] = ("file" if os.path.isfile(path) else
                    "other" if os.path.lexists(path) else None)
    return out


def known_416(k, n, names):
    """A 416 of both: (the names explained, why). nginx's expires and
    add_header apply to it (its headers filter runs before the range
    filter makes the 416); with an error page, it also keeps the ranged
    file's ETag before the page's."""
    if k.code != 416 or n.code != 416:
        return set(), None
    done, why = set(), []
    if names & {"Cache-Control", "Expires"} and not k.has("Cache-Control") \
            and not k.has("Expires"):
        done |= {"Cache-Control", "Expires"}
        why.append("416: Cache-Control and Expires from nginx, not from "
                   "kweb (they give a representation's freshness; a 416 "
                   "has none)")
    ne = n.all("ETag")
    if "ETag" in names and len(ne) == 2 and k.all("ETag") == ne[1:]:
        done.add("ETag")
        why.append("416 page: nginx sends the ranged file's ETag and the "
                   "page's, kweb the page's (RFC 9110 8.8.3: one)")
    return done & names, "; ".join(why) or None


# RFC 3986 3.2.2, written apart from kweb's C: host [ ":" port ].
_UNRES_SUB = r"[A-Za-z0-9._~!$&'()*+,;=-]"
REG_NAME_RE = re.compile(r"(?:%s|%%[0-9A-Fa-f]{2})+" % _UNRES_SUB)
IPVFUTURE_RE = re.compile(r"[vV][0-9A-Fa-f]+\.(?:%s|:)+" % _UNRES_SUB)


def authority_ok(a):
    """Is a a valid authority without userinfo (and, as nginx and kweb
    have it, without ".." and not empty)?"""
    if a.startswith("["):
        end = a.find("]")
        if end < 0:
            return False
        lit, rest = a[1:end], a[end + 1:]
        try:
            ok = isinstance(ipaddress.ip_address(lit), ipaddress.IPv6Address) \
                and "%" not in lit
        except ValueError:
            ok = bool(IPVFUTURE_RE.fullmatch(lit))
        if not ok or ".." in lit:
            return False
    else:
        host, _, rest = a.partition(":")
        rest = ":" + rest if _ else ""
        if not REG_NAME_RE.fullmatch(host) or ".." in host:
            return False
    return rest == "" or re.fullmatch(r":[0-9]*", rest) is not None


def absolute_authority(target):
    m = re.match(r"(?i)https?://([^/?#]*)", target)
    return m.group(1) if m else None


def known_host(host, k, n, target="/"):
    """Why kweb with vhosts may answer host otherwise than nginx with
    server_names, as docs/behaviour.md says; None if it may not."""
    auth = absolute_authority(target)
    if auth is not None and k.code != 400 and n.code == 400 and \
            authority_ok(auth) and not re.fullmatch(r"[A-Za-z0-9.-]*(:.*)?",
                                                    auth):
        return "absolute-form: nginx takes only letters, digits, '.' and " \
            "'-' in a name (and 400s the rest), kweb all of RFC 3986's " \
            "reg-name (unreserved, pct-encoded, sub-delims)"
    if auth is not None:
        return None
    if host == "" and n.code == 400 and k.code != 400:
        return "an empty Host: the default host for kweb (RFC 9112 3.2 " \
            "allows it for a target without authority), 400 from nginx"
    if host is not None and k.code == 400 and n.code != 400 and \
            not authority_ok(host):
        return "not a valid authority (RFC 3986 3.2.2: userinfo, a port " \
            "that is not digits, a backslash, a broken IP literal or " \
            "escape, a non-ASCII byte): 400 from kweb as RFC 9112 3.2 " \
            "wants, nginx takes it"
    return None


def known_cond(fields, k, n):
    """Where kweb's conditionals follow RFC 9110 13.1 and nginx 1.22's
    do not (docs/behaviour.md); None elsewhere."""
    val = {}
    for f in fields:
        name, _, v = f.partition(":")
        val.setdefault(name.strip().lower(), v.strip())
    ius = val.get("if-unmodified-since")
    if ius is not None and n.code == 412 and k.code in (200, 206, 304):
        if "if-match" in val:
            return "If-Unmodified-Since beside If-Match: ignored by kweb " \
                "(RFC 9110 13.1.4), evaluated by nginx"
        try:
            ok = email.utils.parsedate_to_datetime(ius) is not None
        except (TypeError, ValueError, IndexError):
            ok = False
        if not ok:
            return "an If-Unmodified-Since that is not a date: ignored " \
                "by kweb (RFC 9110 13.1.4), 412 from nginx"
    if "if-none-match" in val and "if-modified-since" in val and \
            k.code == 304 and n.code == 200:
        return "If-Modified-Since beside a matching If-None-Match: " \
            "ignored by kweb (RFC 9110 13.1.3, 304), nginx wants both"
    return None


def known(target, method, fields, k, n, names):
    """Why kweb's answer k may differ from nginx's n in names (a set),
    as docs/behaviour.md says; None if it may not."""
    why = known_cond(fields, k, n)
    if why:
        return why
    done, why = known_416(k, n, names)
    if why:
        names = names - done
        if not names:
            return why
    ranged = any(f.lower().startswith("range:") for f in fields)
    if method == "HEAD" and ranged and k.code == 200 and \
            n.code in (206, 416):
        return "HEAD with Range: 200 from kweb (RFC 9110 14.2: ranges " \
            "are GET's), 206 or 416 from nginx"
    sib = siblings(target)
    if names == {"Vary"} and n.has("Vary") and not k.has("Vary") and \
            "other" in sib.values():
        return "a NAME.gz or NAME.br that is not a file: Vary from " \
            "nginx, not from kweb"
    if names == {"Vary"} and k.has("Vary") and not n.has("Vary") and \
            sib[".br"] == "file" and sib[".gz"] != "file":
        return "only a NAME.br: nginx's brotli_static sends Vary only " \
            "with it, kweb with every answer (RFC 9110 12.5.5)"
    ae = " ".join(f.split(":", 1)[1] for f in fields
                  if f.lower().startswith("accept-encoding:")).lower()
    if "x-gzip" in ae:
        return "x-gzip is gzip for kweb (RFC 9110 8.4.1.3), not for nginx"
    if ae.strip().startswith("*"):
        return "* allows br and gzip for kweb (RFC 9110 12.5.3), " \
            "nothing for nginx"
    if any(f.lower().startswith("range:") and "," in f for f in fields):
        return "kweb answers several ranges with the whole file, nginx " \
            "with multipart/byteranges"
    if n.get("Content-Encoding") and (
            names <= {"Accept-Ranges"} or (ranged and names <= PRE_RANGE)):
        return "kweb honours Range on precompressed files and says so " \
            "(RFC 9110 14), nginx does neither"
    return None


def fetch(addr, target, method="GET", fields=(), host_field=True,
          version="1.1", body=b""):
    """host_field: True for "Host: ADDR:PORT", None for none, else the
    value to send. The final response (nginx sends 100 Continue first to
    Expect: 100-continue, kweb does not)."""
    host, port = addr
    conn = Connection(host, port, time.monotonic() + CFG.timeout)
    try:
        head = ["%s %s HTTP/%s" % (method, target, version)]
        if host_field is True:
            head.append("Host: %s:%d" % (format_host(host), port))
        elif host_field is not None:
            head.append("Host: " + host_field)
        head += list(fields)
        conn.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") +
                  body)
        return conn.read_final(method)
    finally:
        conn.close()


def page_body(n):
    """An error page as kweb's: nginx's signature, and 416's RFC 9110
    reason (nginx 1.22 keeps RFC 7233's "Requested Range ...")."""
    body = n.body
    if n.code >= 300 and n.get("Content-Type") == "text/html":
        body = body.replace(b"<center>nginx</center>",
                            b"<center>kweb</center>")
        body = body.replace(b"416 Requested Range Not Satisfiable",
                            b"416 Range Not Satisfiable")
    return body


def expires_offset(r):
    """Expires as seconds after Date: the two servers answer in different
    seconds, but must give the same lifetime."""
    exp, date = r.get("Expires"), r.get("Date")
    if not exp or not date:
        return exp
    try:
        return int((email.utils.parsedate_to_datetime(exp) -
                    email.utils.parsedate_to_datetime(date)).total_seconds())
    except (TypeError, ValueError):
        return exp


def compare(target, method, fields, pair=None, **kw):
    """Send the request to both (pair: their addresses, default the
    main ones): (kweb's response, nginx's, {name: what differs}), status
    and body among the names."""
    kaddr, naddr = pair or (CFG.kweb, CFG.nginx)
    k = fetch(kaddr, target, method, fields, **kw)
    n = fetch(naddr, target, method, fields, **kw)
    diffs = {}
    if k.code != n.code:
        diffs["status"] = "status %d, nginx %d" % (k.code, n.code)
    kbody, nbody = page_body(k), page_body(n)
    for name in COMPARED:
        kv, nv = k.all(name), n.all(name)
        # The error pages' lengths follow the signatures.
        if name == "Content-Length" and k.code >= 300 and kv:
            kv = [str(len(kbody))]
        if name == "Content-Length" and n.code >= 300 and nv:
            nv = [str(len(nbody))]
        # Field lines of one name are one list (RFC 9110 5.3): nginx's
        # expires and add_header make two Cache-Control lines.
        if name == "Cache-Control":
            kv, nv = ", ".join(kv), ", ".join(nv)
        if name == "Expires":
            kv, nv = expires_offset(k), expires_offset(n)
        if kv != nv:
            diffs[name] = "%s %r, nginx %r" % (name, kv, nv)
    if kbody != nbody:
        diffs["body"] = "body %d bytes, nginx %d" % (len(kbody), len(nbody))
    return k, n, diffs


def servable(rel, m):
    """Files both may serve alike: no symlinks (kweb refuses those that
    leave the docroot, nginx follows them), nothing private."""
    return m["type"] in ("file", "dir") and "link" not in rel and \
        not rel.startswith(("owned", "private", "privindex")) and \
        rel != "fifo"


def targets():
    with open(CFG.manifest) as f:
        files = json.load(f)["files"]
    out = []
    for rel, m in sorted(files.items()):
        if not servable(rel, m):
            continue
        if m["type"] == "dir":
            out += ["/" + rel + "/", "/" + rel]
        elif all(ord(c) < 128 and c not in " %?#" for c in rel):
            out.append("/" + rel)
    return out + ["/", "/no-such-file", "/pre/no-such.js", "/pre/"]


class Differ:
    def __init__(self):
        self.sent = 0
        self.same = 0
        self.known = {}
        self.bad = []

    def one(self, target, method="GET", fields=(), **kw):
        k, n, diffs = compare(target, method, fields, **kw)
        self.sent += 1
        if not diffs:
            self.same += 1
            return k
        if "host_field" in kw:
            why = known_host(kw["host_field"], k, n, target)
        else:
            why = known(target, method, fields, k, n, set(diffs))
        if why:
            self.known[why] = self.known.get(why, 0) + 1
        else:
            self.bad.append("%s %s %s%s: %s" % (
                method, target, list(fields),
                " Host %r" % kw["host_field"] if "host_field" in kw else "",
                "; ".join(diffs.values())))
        return k

    def report(self, minimum):
        for why, n in sorted(self.known.items()):
            taplib.note("%d known difference(s): %s" % (n, why))
        taplib.check(self.sent >= minimum, "only %d requests" % self.sent)
        taplib.check(not self.bad, "%d of %d requests differ:\n%s" % (
            len(self.bad), self.sent, "\n".join(self.bad[:40])))
        taplib.note("%d requests, %d the same" % (self.sent, self.same))


@TESTS.test("every file, directory and missing path, GET and HEAD, each "
            "Accept-Encoding: kweb answers as nginx")
def t_files():
    d = Differ()
    big = {"/big.bin"}      # 10 MiB: twice is enough
    for target in targets():
        for ae in ENCODINGS[:2] if target in big else ENCODINGS:
            fields = [] if ae is None else ["Accept-Encoding: " + ae]
            d.one(target, "GET", fields)
        d.one(target, "HEAD", ["Accept-Encoding: gzip, br"])
    d.report(200)


@TESTS.test("precompressed files: ranges and conditionals with the "
            "validators each representation has")
def t_validators():
    d = Differ()
    for target in ("/pre/app.js", "/pre/only-gz.css", "/pre/only-br.svg",
                   "/pre/dir/", "/small.txt"):
        for ae in (None, "gzip", "br", "gzip, br"):
            aef = [] if ae is None else ["Accept-Encoding: " + ae]
            first = d.one(target, "GET", aef)
            etag = first.get("ETag") or '"x"'
            lm = first.get("Last-Modified") or "x"
            size = len(first.body)
            for more in (["Range: bytes=0-9"], ["Range: bytes=-5"],
                         ["Range: bytes=%d-" % size],
                         ["Range: bytes=0-1,4-5"],
                         ["If-None-Match: " + etag],
                         ["If-None-Match: \"other\""],
                         ["If-Modified-Since: " + lm],
                         ["Range: bytes=0-3", "If-Range: " + etag],
                         ["Range: bytes=0-3", "If-Range: \"other\""]):
                d.one(target, "GET", aef + more)
            d.one(target, "HEAD", aef + ["If-None-Match: " + etag])
    d.report(150)


@TESTS.test("precompressed files without the original (NAME.gz, NAME.br, "
            "no NAME): kweb answers as gzip_static and brotli_static, "
            "GET and HEAD, ranges and conditionals")
def t_orphans():
    d = Differ()
    for target in ("/pre/gzonly.txt", "/pre/nobase.js", "/pre/gzonly.txt/"):
        for ae in ENCODINGS:
            aef = [] if ae is None else ["Accept-Encoding: " + ae]
            first = d.one(target, "GET", aef)
            d.one(target, "HEAD", aef)
            etag = first.get("ETag") or '"x"'
            lm = first.get("Last-Modified") or "x"
            for more in (["If-None-Match: " + etag],
                         ["If-Modified-Since: " + lm],
                         ["Range: bytes=0-9"], ["Range: bytes=-5"],
                         ["Range: bytes=0-3", "If-Range: " + etag]):
                d.one(target, "GET", aef + more)
    d.report(200)


@TESTS.test("corners: ranges of an empty file, a name longer than "
            "NAME_MAX, an empty If-Range, precompressed files to HTTP/1.0 "
            "and through a proxy (Via: no gzip, as gzip_static's defaults)")
def t_corners():
    d = Differ()
    for r in ("bytes=0-", "bytes=0-0", "bytes=-5", "bytes=-0", "bytes=1-"):
        d.one("/empty.txt", "GET", ["Range: " + r])
    d.one("/" + "a" * 300, "GET")
    d.one("/dir/" + "b" * 256 + ".txt", "HEAD")
    d.one("/small.txt", "GET", ["Range: bytes=0-3", "If-Range:"])
    for target in ("/pre/app.js", "/pre/dir/", "/pre/only-gz.css",
                   "/pre/gzonly.txt", "/pre/nobase.js"):
        for ae in ("gzip", "gzip, br", "br"):
            aef = ["Accept-Encoding: " + ae]
            d.one(target, "GET", aef, version="1.0")
            d.one(target, "HEAD", aef, version="1.0")
            d.one(target, "GET", aef + ["Via: 1.1 proxy"])
    d.report(50)


@TESTS.test("error pages: 403, 404 and 416 answered with the site's own "
            "pages, GET and HEAD, with ranges and conditionals")
def t_error_pages():
    d = Differ()
    for target in ("/no-such-file", "/pre/no-such.js", "/errors/",
                   "/private/nope.txt", "/private/", "/small.txt",
                   "/pre/app.js", "/errors/404.html"):
        for method in ("GET", "HEAD"):
            for more in ([], ["Range: bytes=100000-"], ["Range: bytes=0-3"],
                         ["If-None-Match: *"], ["Accept-Encoding: gzip"],
                         ["Accept-Encoding: gzip", "Range: bytes=100000-"]):
                d.one(target, method, more)
    d.report(90)


@TESTS.test("virtual hosts: each Host its directory, the others the "
            "default's, bad ones 400, as nginx's server_names")
def t_vhosts():
    if not CFG.vhosts:
        taplib.note("no kweb listener with vhosts (--kwebctl): skipped")
        return
    d = Differ()
    pair = (CFG.kweb_vhosts, CFG.nginx_vhosts)
    hosts = ["a.example", "A.Example", "a.example:8084", "a.example.",
             "b.example", "B.EXAMPLE.:1", "unknown.example", "default",
             "[::1]", "127.0.0.1", "", "_", "../etc", "a.example/..",
             "a b", "a..example", ".a.example", "a.example..", "a\\b",
             "a.example:x", "-"]
    for target in ("/", "/only-a.txt", "/only-default.txt", "/sub/",
                   "/sub", "/nope.txt", "/index.html"):
        for host in hosts:
            d.one(target, "GET", (), pair=pair, host_field=host)
        d.one(target, "GET", (), pair=pair, host_field=None,
              version="1.0")
        d.one(target, "HEAD", (), pair=pair, host_field="b.example")
        # absolute-form: its authority, not Host (RFC 9112 3.2.2).
        d.one("http://b.example" + target, "GET", (), pair=pair,
              host_field="a.example")
        d.one("http://nope.example" + target, "GET", (), pair=pair,
              host_field="a.example")
    d.report(150)


@TESTS.test("conditionals: If-Match and If-Unmodified-Since (412) in RFC "
            "9110 13.2.2's order with If-None-Match, If-Modified-Since "
            "and Range")
def t_preconditions():
    d = Differ()
    for target in ("/small.txt", "/a.html", "/pre/app.js", "/pre/dir/",
                   "/pre/only-br.svg", "/no-such-file"):
        for ae in (None, "gzip, br"):
            aef = [] if ae is None else ["Accept-Encoding: " + ae]
            first = d.one(target, "GET", aef)
            etag = first.get("ETag") or '"x"'
            lm = first.get("Last-Modified") or "Thu, 01 Jan 1970 00:00:00 GMT"
            ts = email.utils.parsedate_to_datetime(lm).timestamp()
            old = email.utils.formatdate(ts - 86400, usegmt=True)
            for more in (["If-Match: " + etag], ['If-Match: "other"'],
                         ["If-Match: W/" + etag], ["If-Match: *"],
                         ['If-Match: "x", ' + etag], ["If-Match:"],
                         ["If-Unmodified-Since: " + lm],
                         ["If-Unmodified-Since: " + old],
                         ["If-Unmodified-Since: garbage"],
                         ['If-Match: "other"', "If-None-Match: " + etag],
                         ["If-Match: " + etag, "If-None-Match: " + etag],
                         ["If-Match: " + etag, "If-Unmodified-Since: " + old],
                         ["If-Unmodified-Since: " + old,
                          "If-Modified-Since: " + lm],
                         ["If-Unmodified-Since: " + lm,
                          "If-None-Match: " + etag],
                         ["If-None-Match: " + etag,
                          "If-Modified-Since: " + old],
                         ['If-Match: "other"', "Range: bytes=0-3"],
                         ["If-Match: " + etag, "Range: bytes=0-3"],
                         ["If-Unmodified-Since: " + old, "Range: bytes=0-3",
                          "If-Range: " + etag]):
                d.one(target, "GET", aef + more)
            d.one(target, "HEAD", aef + ['If-Match: "other"'])
            d.one(target, "HEAD", aef + ["If-Unmodified-Since: " + old])
    d.report(200)


# Authorities: (absolute-form target's, Host field's) values tried.
AUTHORITIES = [
    "localhost", "LOCALHOST.", "127.0.0.1:", "[::1]:80", "[v1.x]",
    "[::ffff:1.2.3.4]", "a.", ".a", "a~b.test", "a!b.test", "a%41.test",
    "a_b", "a*b", "a$&'()+,;=b", "host:9000:80", "[ab..cd::1]", "[::1",
    "::1]", "[::1]x", "[::1]]", "a[b]", "a..b", "a%zz", ":80", "",
    "[fe80::1%25eth0]", "a:b", "a@b.test", "a\x01b", "a\x7fb", "a\x80b",
    "a\\b", "a/b"]


@TESTS.test("authorities: absolute-form targets and Host fields, one "
            "validator (RFC 3986 3.2.2)")
def t_authorities():
    d = Differ()
    for a in AUTHORITIES:
        if "/" not in a:
            d.one("http://%s/small.txt" % a, "GET", (), host_field="x")
        if a != "":
            d.one("/small.txt", "GET", (), host_field=a)
    # Both present: the target's authority wins, but a bad Host is 400.
    d.one("http://a/small.txt", "GET", (), host_field="a/b")
    d.one("http://a:b/small.txt", "GET", (), host_field="a")
    d.one("http://a/small.txt", "GET", (), host_field=None, version="1.0")
    d.one("http://a/small.txt", "GET", (), host_field=None)
    if CFG.vhosts:
        pair = (CFG.kweb_vhosts, CFG.nginx_vhosts)
        for a in ("a~b.test", "b.example", ".b.example", "b%2eexample",
                  "B.EXAMPLE.:80", "[::1]", "a@b.example"):
            for target in ("/", "/only-a.txt"):
                d.one(target, "GET", (), pair=pair, host_field=a)
                d.one("http://%s%s" % (a, target), "GET", (), pair=pair,
                      host_field="a.example")
    d.report(60)


@TESTS.test("Expect: 100-continue on a GET with a body: the same final "
            "response (nginx sends 100 Continue first, kweb closes)")
def t_expect():
    d = Differ()
    for target in ("/small.txt", "/no-such-file", "/pre/app.js"):
        for fields, body in ((["Expect: 100-continue", "Content-Length: 5"],
                              b"hello"),
                             (["Expect: 100-continue", "Content-Length: 5"],
                              b""),
                             (["Expect: 100-continue", "Content-Length: 0"],
                              b""),
                             (["Expect: 100-Continue"], b"")):
            d.one(target, "GET", fields, body=body)
    d.report(12)


def main():
    global CFG
    ap = taplib.client_args(__doc__, timeout_help="seconds per request")
    ap.add_argument("--nginx-port", type=int, default=8083)
    ap.add_argument("--kwebctl", help="add a listener with CACHE_RULES")
    ap.add_argument("--listener-port", type=int, default=8097)
    ap.add_argument("--vhost-port", type=int, default=8098,
                    help="kweb's listener with vhosts on (with --kwebctl)")
    ap.add_argument("--nginx-vhost-port", type=int, default=8084)
    CFG = ap.parse_args()
    CFG.kweb = (CFG.host, CFG.port)
    CFG.nginx = (CFG.host, CFG.nginx_port)
    CFG.manifest = os.path.join(os.path.dirname(
        os.path.abspath(CFG.docroot)), "manifest.json")
    CFG.nginx_vhosts = (CFG.host, CFG.nginx_vhost_port)
    CFG.vhosts = False
    if not CFG.kwebctl:
        return TESTS.run()
    added = []
    try:
        for port, args in ((CFG.listener_port,
                            ["docroot", CFG.docroot, "cache-control",
                             CACHE_RULES, "expires", "yes", "error-pages",
                             ERROR_PAGES]),
                           (CFG.vhost_port,
                            ["docroot", os.path.join(CFG.docroot, "vhosts"),
                             "vhosts", "yes"])):
            p = subprocess.run([CFG.kwebctl, "-j", "listener", "add", "port",
                                str(port)] + args,
                               capture_output=True, text=True, timeout=30)
            if p.returncode:
                print("not ok 1 - kwebctl listener add: exit %d %s" %
                      (p.returncode, p.stderr.strip()))
                return 1
            added.append(str(json.loads(p.stdout)[0]["id"]))
        CFG.kweb = (CFG.host, CFG.listener_port)
        CFG.kweb_vhosts = (CFG.host, CFG.vhost_port)
        CFG.vhosts = True
        return TESTS.run()
    finally:
        for lid in added:
            subprocess.run([CFG.kwebctl, "listener", "del", lid],
                           timeout=30)


if __name__ == "__main__":
    sys.exit(main())
