#!/usr/bin/env python3
"""Every relative link in the repository's Markdown resolves: the file (or
directory) exists, and a #fragment names a heading of the target, spelt as
GitHub makes heading anchors. Links to other sites are not fetched.

    tests/docs_links.py SOURCE_DIR
"""
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def prose(path, strip_code=True):
    """The file's lines outside fenced code blocks, with inline code removed
    (or, for headings, only its backquotes)."""
    out, fenced = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line.lstrip()):
                fenced = not fenced
                continue
            if not fenced:
                out.append(re.sub(r"`[^`]*`", "", line) if strip_code else line.replace("`", ""))
    return out


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to
    hyphens, repeats numbered -1, -2, ..."""
    seen, out = {}, set()
    for line in prose(path, strip_code=False):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
        slug = text.replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def main(root):
    files = [os.path.join(root, f) for f in os.listdir(root) if f.endswith(".md")]
    docs = os.path.join(root, "docs")
    files += [os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md")]
    bad = 0
    for md in sorted(files):
        for n, line in enumerate(prose(md), 1):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    continue
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
                where = "%s: link %s" % (os.path.relpath(md, root), target)
                if not os.path.exists(dest):
                    print("%s: no such file" % where)
                    bad += 1
                elif frag and dest.endswith(".md") and frag not in anchors(dest):
                    print("%s: no heading with anchor #%s" % (where, frag))
                    bad += 1
    if bad:
        return 1
    print("docs_links: every relative link in %d Markdown files resolves" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
