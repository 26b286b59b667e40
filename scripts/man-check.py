#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the man pages say what the code does (make lint).

man/kwebctl.8 against userctl/kwebctl (built with make -C userctl): the
commands, keywords and options of `kwebctl --help` and of every
`kwebctl OBJECT --help`, and from the sources, which the help texts do not
list whole, the config and listener keys (kc_config[], kc_listener_keys[],
listener add's own keys), the subcommands each object's handler takes
(aliases included), the global options (getopt), log's options (log.c)
and the exit codes (nl.h). The forms looked for, under COMMANDS:

  .Ss OBJECT                    one subsection per object
  .It Cm OBJECT COMMAND ...     each command of a --help usage line
                                (".It Cm OBJECT ..." for one without)
  .It Cm KEY ...                each config key (in .Ss config) and each
                                listener key (in .Ss listener); any other
                                such item there must be a real key
  Cm WORD / Fl OPTION           usage keywords, aliases and an object's
                                own options, anywhere in its subsection

and ".It Fl ..." items of OPTIONS for the global options, ".It N" items
of EXIT STATUS for the exit codes. Every help text must also name each
key of its object's table.

man/kweb.4 against kmod/: every module_param*(NAME, ...) of config.c is
an item of PARAMETERS

  .It Va NAME Pq TYPE , default VALUE , read-only|writable

(TYPE "string" for charp; VALUE as the source initializes it: "none"
for "", N/Y for bools, "required" when the description says so;
writable iff the permissions let root write the sysfs file), whose text
names the kwebctl key of the same name (Cm header-timeout) if there is
one; no other .It Va item is there. Every field of /proc/net/kweb
(proc.c, kweb_stat_names[] in main.c) is an ".It Li NAME" of FILES.

Both pages must be clean under `mandoc -T lint -W warning`.

Prints what is missing and exits 1; 0 when all is in step.
"""
import argparse
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MACROS = set("""
%A %B %C %D %I %J %N %O %P %Q %R %T %U %V Ac Ad An Ao Ap Aq Ar At Bc Bd
Bf Bk Bl Bo Bq Brc Bro Brq Bsx Bt Bx Cd Cm D1 Db Dc Dd Dl Do Dq Dt Dv Dx
Ec Ed Ef Ek El Em En Eo Er Es Ev Ex Fa Fc Fd Fl Fn Fo Fr Ft Fx Hf Ic In
It Lb Li Lk Lp Me Ms Mt Nd Nm No Ns Nx Oc Oo Op Os Ot Ox Pa Pc Pf Po Pp
Pq Qc Ql Qo Qq Re Rs Rv Sc Sh Sm So Sq Ss St Sx Sy Ta Tg Tn Ud Ux Va Vt
Xc Xo Xr
""".split())
DELIMS = set(".,:;()[]?!|")


def read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


# ---- mdoc ----

def unescape(s):
    for a, b in (("\\&", ""), ("\\-", "-"), ("\\e", "\\"), ("\\(dq", '"'),
                 ("\\(aq", "'"), ("\\ ", " ")):
        s = s.replace(a, b)
    return s


def split_args(line):
    """A macro line's arguments: (text, quoted) pairs, as mdoc splits them."""
    out, i, n = [], 0, len(line)
    while i < n:
        if line[i] in " \t":
            i += 1
            continue
        if line[i] == '"':
            i += 1
            buf = []
            while i < n:
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(line[i])
                i += 1
            out.append((unescape("".join(buf)), True))
            continue
        j = i
        while j < n and line[j] not in " \t":
            j += 2 if line[j] == "\\" else 1
        out.append((unescape(line[i:j]), False))
        i = j
    return out


def words(args):
    """(macro, word) for every word of a line: the macro it is an argument
    of ("" for none); Fl's words get their dash. Delimiters are skipped
    and keep the macro going, as in mdoc."""
    out, mode = [], ""
    for text, quoted in args:
        if not quoted and text in MACROS:
            mode = text
            if mode == "Fl":
                out.append(("Fl", "-"))
            continue
        if not quoted and text and all(c in DELIMS for c in text):
            continue
        if mode == "Fl":
            if out and out[-1] == ("Fl", "-"):
                out.pop()
            out.append(("Fl", "-" + text))
        else:
            out.append((mode, text))
    return out


class Item:
    def __init__(self, sh, ss, args, lineno):
        self.sh, self.ss, self.lineno = sh, ss, lineno
        self.args = list(args)      # the raw (text, quoted) arguments
        self.head = words(args)     # (macro, word) of the .It line
        self.body = []              # (macro, word) of the lines under it

    def after(self, macro):
        """The text of the head's arguments after macro, other macros
        left out: ".It Va x Pq a , b Do c Dc" gives "a , b c" for Pq."""
        out, seen = [], False
        for text, quoted in self.args:
            if not quoted and text in MACROS:
                seen = seen or text == macro
                continue
            if seen:
                out.append(text)
        return " ".join(out)

    def first(self, macro):
        """The words of head's first macro, if it is macro."""
        if not self.head or self.head[0][0] != macro:
            return []
        ws = []
        for m, w in self.head:
            if m != macro:
                break
            ws.append(w)
        return ws


class Page:
    def __init__(self, path):
        self.path = path
        self.sections = []      # .Sh titles in order
        self.subsections = {}   # Sh -> [Ss titles]
        self.items = []         # every .It
        self.lines = []         # (sh, ss, words) of every macro line
        with open(path, encoding="utf-8") as f:
            raw = f.read().split("\n")
        sh = ss = ""
        stack = []              # per open .Bl: its current Item or None
        xo = None               # the .It whose Xo ... Xc is being read
        for n, line in enumerate(raw, 1):
            if not line.startswith(".") or line.startswith('.\\"'):
                continue
            args = split_args(line[1:])
            if not args:
                continue
            name = args[0][0]
            if xo is not None:
                xo.args += args
                xo.head += words(args)
                self.lines.append((sh, ss, words(args)))
                if any(t == "Xc" and not q for t, q in args):
                    xo = None
                continue
            rest = args[1:]
            text = " ".join(t for t, _ in rest)
            if name == "Sh":
                sh, ss = text, ""
                self.sections.append(sh)
                self.subsections.setdefault(sh, [])
            elif name == "Ss":
                ss = text
                self.subsections.setdefault(sh, []).append(ss)
            ws = words(args)
            self.lines.append((sh, ss, ws))
            if name == "Bl":
                stack.append(None)
            elif name == "El":
                if stack:
                    stack.pop()
            elif name == "It" and stack:
                item = Item(sh, ss, rest, n)
                stack[-1] = item
                self.items.append(item)
                if any(t == "Xo" and not q for t, q in rest):
                    xo = item
                continue
            for it in stack:
                if it is not None:
                    it.body.extend(ws)

    def words_in(self, macro, sh, ss=None):
        return {w for s1, s2, ws in self.lines if s1 == sh and
                (ss is None or s2 == ss) for m, w in ws if m == macro}

    def items_in(self, sh, ss=None):
        return [i for i in self.items if i.sh == sh and
                (ss is None or i.ss == ss)]


# ---- kwebctl: help texts and sources ----

def build_kwebctl():
    r = subprocess.run(["make", "-s", "-C", os.path.join(REPO, "userctl")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, check=False)
    if r.returncode:
        sys.exit("man-check: make -C userctl failed:\n" + r.stdout)
    return os.path.join(REPO, "userctl", "kwebctl")


def run_help(kwebctl, args):
    r = subprocess.run([kwebctl] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, check=False)
    return r.returncode, r.stdout


def usage_lines(text, main=False):
    """The synopses of a help text: its "kwebctl ..." lines with their
    continuation lines and, in the main help, the indented "OBJECT ..."
    lines."""
    out, cont = [], False
    for line in text.split("\n"):
        m = re.match(r"^(?:Usage:)?\s+kwebctl (.*)$", line)
        if m:
            out.append(m.group(1))
            cont = True
            continue
        if cont and re.match(r"^\s{3,}\[", line):
            out[-1] += " " + line.strip()
            continue
        cont = False
        m = re.match(r"^  ([a-z][\w-]*(?:\s\S+)*?)(?:\s{2,}|$)", line)
        if main and m:
            out.append(m.group(1))
    return out


WORD = re.compile(r"[a-z][\w-]*")


def parse_synopsis(s):
    """(object, [commands], [keywords], [options]) of one synopsis: the
    object is its first lower-case word outside brackets, the commands
    that word's successor if it is outside brackets too (list|add|del),
    keywords every later lower-case word; upper-case words are
    placeholders."""
    toks, depth = [], 0
    for w in s.replace("...", " ").split():
        d = depth + (1 if w.startswith("[") else 0)
        depth += w.count("[") - w.count("]")
        alts = [a.strip("[]") for a in w.split("|")]
        toks.append(([a for a in alts if a], d))
    obj, cmds, keys, opts = None, [], [], []
    rest = []
    for n, (alts, d) in enumerate(toks):
        if not alts:
            continue
        if alts[0].startswith("-"):
            opts += alts
            continue
        if d == 0 and WORD.fullmatch(alts[0]):
            obj = alts[0]
        # Else a placeholder: "kwebctl OBJECT --help".
        rest = toks[n + 1:]
        break
    if obj and rest and rest[0][1] == 0 and rest[0][0] and \
            all(WORD.fullmatch(a) for a in rest[0][0]):
        cmds, rest = rest[0][0], rest[1:]
    for alts, d in rest:
        for a in alts:
            if a.startswith("-"):
                opts.append(a)
            elif WORD.fullmatch(a):
                keys.append(a)
    return obj, cmds, keys, opts


def c_function(src, name):
    m = re.search(r"^(?:static )?\w+ " + re.escape(name) + r"\(.*?^}", src,
                  re.S | re.M)
    return m.group(0) if m else ""


def table_names(src, table):
    m = re.search(re.escape(table) + r"\[\] = \{(.*?)^\};", src, re.S | re.M)
    if not m:
        sys.exit("man-check: no %s[] in userctl/kwebctl.c" % table)
    return re.findall(r'\{ "([\w-]+)"', m.group(1))


def kwebctl_facts(kwebctl):
    src = read("userctl/kwebctl.c")
    log_src = read("userctl/log.c")
    nl_h = read("userctl/nl.h")
    f = {"objects": {}, "global_opts": set(), "help_words": set(),
         "config_keys": table_names(src, "kc_config"),
         "listener_keys": table_names(src, "kc_listener_keys"),
         "add_keys": [], "exit_codes": set(), "help": {}, "errors": []}

    # The objects, their handlers, and what each handler compares argv to.
    m = re.search(r"\} kc_objects\[\] = \{(.*?)^\};", src, re.S | re.M)
    for name, fn in re.findall(r'\{ "(\w+)", (\w+) \}', m.group(1)):
        body = c_function(src, fn)
        # kc_cmd_log_json hands on to log.c's kc_cmd_log.
        if "kc_cmd_log(" in body:
            body += log_src
        o = f["objects"].setdefault(name, {"cmds": set(), "words": set(),
                                           "opts": set()})
        for w in re.findall(r'strcmp\(argv\[\w+\], "([^"]+)"\)', body):
            (o["opts"] if w.startswith("-") else o["words"]).add(w)

    # listener add's own keys, besides the table's (its builder, which
    # kwebctl -b and apply share).
    body = c_function(src, "kc_listener_add_build")
    f["add_keys"] = re.findall(r'strcmp\(key, "([\w-]+)"\)', body)

    # Global options: getopt's table and short options.
    main = src[src.index("int main("):]
    f["global_opts"] |= {"--" + n for n in
                         re.findall(r'\{ "([\w-]+)", \w+_argument', main)}
    short = re.search(r'getopt_long\(argc, argv, "\+?([^"]*)"', main)
    f["global_opts"] |= {"-" + c for c in short.group(1) if c != ":"}
    # What kc_is_help() takes after an object.
    f["help_words"] = set(re.findall(r'!strcmp\(s, "([^"]+)"\)',
                                     c_function(src, "kc_is_help")))

    f["exit_codes"] = {int(v) for v in
                       re.findall(r"^\s*KC_\w+ = (\d+),", nl_h, re.M)}

    # The help texts.
    rc, main_help = run_help(kwebctl, ["--help"])
    if rc:
        f["errors"].append("kwebctl --help exited %d" % rc)
    f["help"]["main"] = main_help
    topics = set(f["objects"])
    for syn in usage_lines(main_help, main=True):
        obj = parse_synopsis(syn)[0]
        if obj:
            topics.add(obj)
    for t in sorted(topics):
        rc, text = run_help(kwebctl, [t, "--help"])
        if rc:
            f["errors"].append("kwebctl %s --help exited %d" % (t, rc))
        f["help"][t] = text
    for topic, text in f["help"].items():
        for syn in usage_lines(text, main=topic == "main"):
            obj, cmds, keys, opts = parse_synopsis(syn)
            for o in opts:
                if o not in f["global_opts"] and obj:
                    f["objects"].setdefault(obj, {"cmds": set(),
                                                  "words": set(),
                                                  "opts": set()})
                    f["objects"][obj]["opts"].add(o)
                elif o not in f["global_opts"]:
                    f["global_opts"].add(o)
            if not obj:
                continue
            o = f["objects"].setdefault(obj, {"cmds": set(), "words": set(),
                                              "opts": set()})
            o["cmds"] |= set(cmds)
            o["words"] |= set(keys)
    return f


def has_word(text, w):
    return re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", text)


def check_kwebctl(page, f):
    errs = list(f["errors"])
    n = 0
    for s in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS",
              "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
        n += 1
        if s not in page.sections:
            errs.append("kwebctl.8: no section %s" % s)
    subs = page.subsections.get("COMMANDS", [])
    for obj, o in sorted(f["objects"].items()):
        n += 1
        if obj not in subs:
            errs.append("kwebctl.8: no .Ss %s under COMMANDS" % obj)
            continue
        heads = [i.first("Cm") for i in page.items_in("COMMANDS", obj)]
        cm = page.words_in("Cm", "COMMANDS", obj)
        fl = page.words_in("Fl", "COMMANDS", obj)
        if not o["cmds"]:
            n += 1
            if not any(h[:1] == [obj] for h in heads):
                errs.append("kwebctl.8: no .It Cm %s in .Ss %s" % (obj, obj))
        for c in sorted(o["cmds"]):
            n += 1
            if not any(h[:2] == [obj, c] for h in heads):
                errs.append("kwebctl.8: command \"%s %s\" (kwebctl --help) "
                            "has no .It Cm %s %s" % (obj, c, obj, c))
        for w in sorted(o["words"] - o["cmds"]):
            n += 1
            if w not in cm:
                errs.append("kwebctl.8: \"%s\" of kwebctl %s is not a Cm "
                            "word of .Ss %s" % (w, obj, obj))
        for opt in sorted(o["opts"]):
            n += 1
            if opt not in fl:
                errs.append("kwebctl.8: option %s of kwebctl %s is not a Fl "
                            "of .Ss %s" % (opt, obj, obj))

    # Keys: an item each, and no item for a key that does not exist.
    for obj, keys in (("config", f["config_keys"]),
                      ("listener", f["listener_keys"] + f["add_keys"])):
        heads = [i.first("Cm") for i in page.items_in("COMMANDS", obj)]
        firsts = {h[0] for h in heads if h}
        for k in keys:
            n += 1
            if k not in firsts:
                errs.append("kwebctl.8: %s key %s has no .It Cm %s in "
                            ".Ss %s" % (obj, k, k, obj))
        for w in sorted(firsts - set(keys) - {obj}):
            errs.append("kwebctl.8: .It Cm %s in .Ss %s is not a %s key "
                        "of userctl/kwebctl.c" % (w, obj, obj))
    for obj, keys in (("config", f["config_keys"]),
                      ("listener", f["listener_keys"])):
        for k in keys:
            n += 1
            if not has_word(f["help"].get(obj, ""), k):
                errs.append("kwebctl %s --help does not name its key %s"
                            % (obj, k))

    # Options.
    fl = {w for i in page.items_in("OPTIONS") for m, w in i.head
          if m == "Fl"}
    opt_words = page.words_in("Fl", "OPTIONS") | \
        page.words_in("Cm", "OPTIONS")
    for o in sorted(f["global_opts"]):
        n += 1
        if o not in fl:
            errs.append("kwebctl.8: option %s has no .It Fl in OPTIONS" % o)
    for w in sorted(f["help_words"]):
        n += 1
        if w not in opt_words:
            errs.append("kwebctl.8: \"OBJECT %s\" is not in OPTIONS" % w)

    # Exit codes.
    codes = set()
    for i in page.items_in("EXIT STATUS"):
        if i.head and i.head[0][0] == "" and i.head[0][1].isdigit():
            codes.add(int(i.head[0][1]))
    for c in sorted(f["exit_codes"]):
        n += 1
        if c not in codes:
            errs.append("kwebctl.8: exit status %d has no .It %d" % (c, c))
    for c in sorted(codes - f["exit_codes"]):
        errs.append("kwebctl.8: exit status %d is not in userctl/nl.h" % c)
    return errs, n


# ---- kweb.4: module parameters and /proc/net/kweb ----

def c_args(s):
    """Top-level comma-separated arguments of a C call's argument text."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def module_params():
    src = read("kmod/config.c")
    decls = {}
    for t, name, init in re.findall(
            r"^static\s+(char\s*\*|\w+)\s*(\w+)\s*(?:=\s*([^;]+))?;",
            src, re.M):
        decls[name] = (t.replace(" ", ""), init.strip() if init else None)
    macros = dict(re.findall(r"^#define\s+(\w+)\s+([^\s/]+)", src, re.M))
    descs = {}
    for name, text in re.findall(r"MODULE_PARM_DESC\((\w+),\s*((?:\"(?:[^\"\\]|\\.)*\"\s*)+)\)", src):
        descs[name] = text
    params = []
    for kind, argtext in re.findall(r"\bmodule_param(\w*)\s*\(([^;]*?)\)\s*;",
                                    src, re.S):
        a = c_args(argtext)
        name, perm = a[0], int(a[-1], 8)
        if kind == "":
            ctype, var = a[1], a[0]
        elif kind == "_named":
            ctype, var = a[2], a[1]
        else:
            var = a[2].lstrip("&")
            ctype = decls.get(var, ("?", None))[0]
        ctype = {"char*": "charp"}.get(ctype, ctype)
        if "." in var:
            field = var.split(".")[-1]
            m = re.search(r"\." + field + r"\s*=\s*([^,\n]+),", src)
            init = m.group(1).strip() if m else None
        else:
            init = decls.get(var, (None, None))[1]
        # A default named by a macro (shared with a namespace's defaults).
        init = macros.get(init, init)
        if "(required)" in descs.get(name, ""):
            default = "required"
        elif ctype == "bool":
            default = "default " + ("Y" if init == "true" else "N")
        elif ctype == "charp":
            v = (init or '""').strip('"')
            default = "default " + (v or "none")
        else:
            default = "default " + (init or "0")
        params.append({"name": name, "perm": perm, "default": default,
                       "type": {"charp": "string"}.get(ctype, ctype),
                       "access": "writable" if perm & 0o222 else
                                 "read-only"})
    return params


def proc_fields():
    src = read("kmod/proc.c")
    main = read("kmod/main.c")
    top, listener = [], []
    for fmt in re.findall(r'seq_printf\(m, "([^"]*)"', src):
        if fmt.startswith("listener "):
            listener = re.findall(r"([a-z_]+) (?:%|$)", fmt)
        else:
            top += re.findall(r"^([a-z_]+) %", fmt)
    m = re.search(r"kweb_stat_names\[\w+\] = \{(.*?)\};", main, re.S)
    top += re.findall(r'= "(\w+)"', m.group(1))
    return top, listener


def check_kweb(page, keys):
    errs, n = [], 0
    for s in ("NAME", "SYNOPSIS", "DESCRIPTION", "PARAMETERS", "FILES",
              "DIAGNOSTICS", "SECURITY", "SEE ALSO"):
        n += 1
        if s not in page.sections:
            errs.append("kweb.4: no section %s" % s)
    items = {}
    for i in page.items_in("PARAMETERS"):
        v = i.first("Va")
        if v:
            items[v[0]] = i
    params = module_params()
    if not params:
        errs.append("no module_param in kmod/config.c (man-check broken?)")
    names = set()
    for p in params:
        n += 1
        names.add(p["name"])
        it = items.get(p["name"])
        if not it:
            errs.append("kweb.4: module parameter %s has no .It Va %s in "
                        "PARAMETERS" % (p["name"], p["name"]))
            continue
        got = [re.sub(r"\s+", " ", x).strip() for x in
               it.after("Pq").split(",")]
        want = [p["type"], p["default"], p["access"]]
        if got != want:
            errs.append("kweb.4: .It Va %s says (%s); kmod/config.c says "
                        "(%s)" % (p["name"], ", ".join(got),
                                  ", ".join(want)))
        key = p["name"].replace("_", "-")
        if key in keys:
            cm = {w for m, w in it.head + it.body if m == "Cm"}
            if key not in cm:
                errs.append("kweb.4: .It Va %s does not name kwebctl's key "
                            "(Cm %s)" % (p["name"], key))
    for extra in sorted(set(items) - names):
        errs.append("kweb.4: .It Va %s in PARAMETERS is not a module "
                    "parameter of kmod/config.c" % extra)

    top, listener = proc_fields()
    heads = {w for i in page.items_in("FILES") for m, w in i.head
             if m == "Li"}
    li = page.words_in("Li", "FILES")
    for fld in top:
        n += 1
        if fld not in heads:
            errs.append("kweb.4: /proc/net/kweb field %s has no .It Li %s "
                        "in FILES" % (fld, fld))
    for fld in listener:
        n += 1
        if fld not in li:
            errs.append("kweb.4: /proc/net/kweb listener field %s is not a "
                        "Li word of FILES" % fld)
    return errs, n


def mandoc_lint(paths):
    try:
        r = subprocess.run(["mandoc", "-T", "lint", "-W", "warning"] + paths,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, check=False)
    except FileNotFoundError:
        return ["mandoc not found (apt-get install mandoc; scripts/deps.sh)"]
    out = r.stdout.strip()
    if out or r.returncode:
        return ["mandoc -T lint -W warning (exit %d):" % r.returncode] + \
            out.split("\n")
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kwebctl", help="use this kwebctl, do not build one")
    ap.add_argument("--man-dir", default=os.path.join(REPO, "man"),
                    help="where kwebctl.8 and kweb.4 are (default: man/)")
    args = ap.parse_args()
    kwebctl = args.kwebctl or build_kwebctl()
    k8 = os.path.join(args.man_dir, "kwebctl.8")
    k4 = os.path.join(args.man_dir, "kweb.4")
    errs = []
    for p in (k8, k4):
        if not os.path.exists(p):
            errs.append("%s: missing" % p)
    if errs:
        print("\n".join("man-check: " + e for e in errs))
        return 1
    facts = kwebctl_facts(kwebctl)
    e1, n1 = check_kwebctl(Page(k8), facts)
    keys = set(facts["config_keys"]) | set(facts["listener_keys"])
    e2, n2 = check_kweb(Page(k4), keys)
    errs = e1 + e2 + mandoc_lint([k8, k4])
    for e in errs:
        print("man-check: " + e)
    if errs:
        print("man-check: %d problem(s)" % len(errs))
        return 1
    print("man-check: ok, %d items of kwebctl.8 and %d of kweb.4 in step"
          % (n1, n2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
