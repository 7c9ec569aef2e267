#!/bin/bash
# Every command, option, man page and file that README.md and docs/*.md name exists, so the docs
# cannot drift from the code. What counts as "named": text in code (`spans`, fenced blocks, and
# lines indented 4 or more spaces) and link targets; prose is not parsed. Checked:
#   - `xpart SUB... --opt` and `xpart-sim SUB... --opt`: each subcommand is one the built
#     program's --help lists, and each long option one that SUB's --help prints (as
#     help_documented.sh walks them: "$prog" SUB... --help, its "Subcommands:" section);
#   - each SPANK option `--xpart-*` is one spank_plugin/xpart_spank.cpp declares;
#   - each man page named as xpart(1), xpart-spank(8), ... is in man/;
#   - repository paths: a name whose first component is a top-level directory of the source
#     tree (etc/, scripts/, tests/, docs/, man/, .ci/, ...), and every relative link target,
#     exists (<placeholders> and * match anything; a program may be named as built: NAME.cpp,
#     NAME.c, or a *_PROGRAMS entry of a local.am). Names starting with / are the node's files
#     (/etc/slurm/gres.conf, /run/xpart), not the repository's, and are not checked; nor are the
#     few Slurm names that look like our paths (NOT_PATHS below);
#   - the README's two commands (the first two lines of the fenced block under its "The two
#     commands" heading) are what tests/demo/demo_test and .ci/run run.
# One line per failure (doc:line: the name, what is wrong); exit 1 on any.
set -u
S=${XPART_SRCDIR:?set by make check}
B=${XPART_BUILDDIR:?set by make check}
exec python3 - "$S" "$B" <<'PY'
import glob, os, re, subprocess, sys

S, B = sys.argv[1], sys.argv[2]
PROGRAMS = ("xpart", "xpart-sim")
# Slurm plugin names whose first component is one of our folders (cgroup/).
NOT_PATHS = {"cgroup/v1", "cgroup/v2"}
# README's two commands: (line of its fenced block, the file that must run the same command).
TWO_COMMANDS = ((0, "tests/demo/demo_test"), (1, ".ci/run"))
failures = []
checked = {"options": 0, "SPANK options": 0, "paths": 0}

def fail(where, what):
    failures.append((where, what))

def help_tree(prog, path=()):
    """{subcommand path: (long options, subcommands)} from the program's own --help."""
    run = subprocess.run([os.path.join(B, prog), *path, "--help"], capture_output=True, text=True)
    text = run.stdout + run.stderr
    if run.returncode != 0:
        fail(" ".join((prog,) + path), "--help exits " + str(run.returncode))
    opts = set(re.findall(r"--[a-zA-Z][a-zA-Z0-9-]*", text))
    subs, on = [], False
    for line in text.splitlines():
        if line.lower().startswith("subcommands:"):
            on = True
        elif on and not line.strip():
            on = False
        elif on and re.match(r"  [a-z]", line):
            subs.append(line.split()[0])
    tree = {path: (opts, set(subs))}
    for sub in subs:
        tree.update(help_tree(prog, path + (sub,)))
    return tree

trees = {prog: help_tree(prog) for prog in PROGRAMS}
spank_src = open(os.path.join(S, "spank_plugin/xpart_spank.cpp")).read()
spank_options = {"--" + o for o in re.findall(r'const_cast<char\*>\("(xpart-[a-z-]+)"\)', spank_src)}
if len(spank_options) < 3 or len(trees["xpart"]) < 8:
    fail("setup", "too few SPANK options or xpart subcommands found: the sources or --help changed")
# _build/ is scripts/test's output, there or not as a run has got so far: not a source path.
top_dirs = sorted(d for d in os.listdir(S) if os.path.isdir(os.path.join(S, d)) and d not in (".git", "_build"))
path_re = re.compile(r'(?:^|(?<=[\s"\'(=\[,]))((?:%s)/[A-Za-z0-9_.*/<>+-]*)'
                     % "|".join(re.escape(d) for d in top_dirs))

# Programs the build makes (automake *_PROGRAMS lines, continuations joined).
am_text = "".join(open(f).read() for f in glob.glob(os.path.join(S, "**/*.am"), recursive=True))
programs = {word for line in re.findall(r"^\w*_PROGRAMS \+?= ((?:.*\\\n)*.*)", am_text, re.M)
            for word in line.replace("\\", " ").split()}

def exists(rel):
    pattern = re.sub(r"<[^>]*>", "*", rel).rstrip(".,:;")
    return rel in programs or any(glob.glob(os.path.join(S, pattern + ext)) for ext in ("", ".cpp", ".c"))

def check_command(where, words):
    """words after a program name: resolve subcommands, then check each long option."""
    prog = words[0]
    tree, path = trees[prog], ()
    for i, word in enumerate(words[1:], 1):
        word = word.lstrip("[")  # [--optional] in a synopsis
        if word in ("--", "#", "|", ";", "&&", "||") or word.startswith("#"):
            return
        opts, subs = tree[path]
        if word.startswith("--"):
            opt = word.split("=")[0].rstrip("]`.,)")
            checked["options"] += 1
            if opt not in opts:
                fail(where, f"{' '.join((prog,) + path)} {opt}: not an option its --help prints")
        elif subs and re.fullmatch(r"[a-z][a-z-]*([|/][a-z][a-z-]*)*", word) and i == len(path) + 1:
            alternatives = re.split(r"[|/]", word)
            for alt in alternatives:
                if alt not in subs:
                    fail(where, f"{' '.join((prog,) + path)} {alt}: not a subcommand its --help lists")
            if len(alternatives) > 1 or alternatives[0] not in subs:
                return
            path += (word,)

def check_code(where, code):
    words = code.split()
    for i, word in enumerate(words):
        if word in PROGRAMS:
            check_command(where, words[i:])
    for opt in re.findall(r"--xpart-[a-z]+(?:-[a-z]+)*", code):
        checked["SPANK options"] += 1
        if opt not in spank_options:
            fail(where, f"{opt}: not a SPANK option of spank_plugin/xpart_spank.cpp")
    for name in path_re.findall(code):
        name = name.rstrip(".,:;)")
        checked["paths"] += 1
        if name not in NOT_PATHS and not exists(name):
            fail(where, f"{name}: no such file in the source tree")

def check_doc(rel):
    lines = open(os.path.join(S, rel)).read().split("\n")
    prose, fenced = [], False
    for n, line in enumerate(lines, 1):
        where = f"{rel}:{n}"
        if line.lstrip().startswith("```"):
            fenced = not fenced
            prose.append("")
        elif fenced or line.startswith("    "):
            check_code(where, line)
            prose.append("")
        else:
            prose.append(line)
        for target in re.findall(r"\]\(([^)#\s]+)", line):
            if not re.match(r"[a-z]+:", target) and not os.path.exists(
                    os.path.normpath(os.path.join(S, os.path.dirname(rel), target))):
                fail(where, f"link {target}: no such file")
        for man, section in re.findall(r"\b(xpart[a-z.-]*)\((\d)\)", line):
            if not os.path.exists(os.path.join(S, "man", f"{man}.{section}")):
                fail(where, f"{man}({section}): no man/{man}.{section}")
    text = "\n".join(prose)  # spans may wrap onto the next line
    for m in re.finditer(r"`([^`]+)`", text):
        check_code(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1).replace("\n", " "))

def invoked(rel):
    """The scripts/ commands a file runs (its non-comment lines), as `scripts/x args`."""
    found = []
    for line in open(os.path.join(S, rel)):
        if not line.lstrip().startswith("#"):
            for m in re.finditer(r'(?:"\$S/|\b)(scripts/[a-z-]+)"?((?: +[a-z][a-z-]*)*)', line):
                found.append((m.group(1) + m.group(2)).strip())
    return found

def check_two_commands():
    lines = open(os.path.join(S, "README.md")).read().split("\n")
    head = next((i for i, l in enumerate(lines) if l.startswith("## The two commands")), None)
    start = next((i for i in range(head or 0, len(lines)) if lines[i].startswith("```")), None)
    if head is None or start is None:
        return fail("README.md", "no fenced block under a \"## The two commands\" heading")
    block = []
    for line in lines[start + 1:]:
        if line.startswith("```"):
            break
        block.append(line.split("#")[0].strip())
    for index, rel in TWO_COMMANDS:
        command = block[index] if index < len(block) else "(none)"
        runs = invoked(rel)
        if runs != [command]:
            fail(f"README.md:{start + 2 + index}", f"{command}: {rel} runs {runs or 'nothing'} instead")

docs = ["README.md"] + sorted(os.path.relpath(p, S) for p in glob.glob(os.path.join(S, "docs/*.md")))
for rel in docs:
    check_doc(rel)
check_two_commands()
# A changed doc layout or help format must not pass vacuously.
for what, least in (("options", 20), ("SPANK options", 20), ("paths", 50)):
    if checked[what] < least:
        fail("all docs", f"only {checked[what]} {what} found (at least {least} expected)")
def doc_order(failure):  # by doc, then line
    rel, _, line = failure[0].partition(":")
    return rel, int(line) if line.isdigit() else 0
for where, what in sorted(failures, key=doc_order):
    print(f"FAIL: {where}: {what}")
counts = ", ".join(f"{n} {what}" for what, n in checked.items())
print(f"docs_named: {len(docs)} docs, {counts} checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
PY
