#!/usr/bin/env python3
"""Fails when a public type of a documented target is curated nowhere.

DocC lists an uncurated type on its own, in an automatic "Structures"/"Classes" group, and says
nothing; this check makes such a type a CI failure, so the catalog stays the map of the API.

    python3 .ci/docs-curation.py SCRATCH TARGET...

SCRATCH is the build folder that `swift package generate-documentation` used (its symbol graphs
are in SCRATCH/<triple>/extracted-symbols/<package>/<TARGET>/). A type counts as curated when a
`- ``Link``` line of a Topics section links to it, in the target's catalog
(Sources/TARGET/TARGET.docc/*.md) or in the documentation comment of another of its symbols (a
link there is relative to that symbol, as DocC resolves it). Links name types by their path:
``Name``, ``Parent/Nested``, optionally ``/TARGET/Name`` or with a DocC disambiguation suffix.
Broken links are DocC's to report (`--warnings-as-errors`); this only looks for missing ones.
"""
import glob
import json
import os
import re
import sys

TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.actor",
              "swift.typealias"}
LINK = re.compile(r"^\s*-\s*``([^`]+)``")
HEADING = re.compile(r"^\s*(#+)\s*(.*?)\s*$")


def strip_suffix(component):
    # DocC disambiguation: name-swift.struct, name-1a2b3, f(_:)-(Int); a type name has no '-' itself.
    return component.split("-", 1)[0] if not component.startswith("-") else component


def normalize(link, module):
    """A link's path components, without the module's name and DocC's disambiguation suffixes."""
    parts = [strip_suffix(p) for p in link.strip().split("/") if p]
    if len(parts) > 1 and parts[0] == module:
        parts = parts[1:]
    return parts


def topic_links(lines):
    """The links of the `- ``X``` lines under a `## Topics` heading and its subheadings."""
    links, inside, level = [], False, 0
    for line in lines:
        m = HEADING.match(line)
        if m:
            if m.group(2) == "Topics":
                inside, level = True, len(m.group(1))
            elif inside and len(m.group(1)) <= level:
                inside = False
            continue
        if inside:
            m = LINK.match(line)
            if m:
                links.append(m.group(1))
    return links


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    scratch, targets = sys.argv[1], sys.argv[2:]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    failed = False
    for target in targets:
        graphs = glob.glob(os.path.join(scratch, "*", "extracted-symbols", "*", target, target + ".symbols.json"))
        if not graphs:
            print("docs: no symbol graph of %s under %s (run generate-documentation first)" % (target, scratch))
            failed = True
            continue
        graph = json.load(open(max(graphs, key=os.path.getmtime)))
        types = {}
        curated = set()
        for symbol in graph["symbols"]:
            path = tuple(symbol["pathComponents"])
            if symbol["kind"]["identifier"] in TYPE_KINDS and symbol.get("accessLevel") in ("public", "open"):
                types[path] = symbol["kind"]["displayName"]
            comment = [l["text"] for l in (symbol.get("docComment") or {}).get("lines", [])]
            for link in topic_links(comment):
                parts = normalize(link, target)
                # Relative to the symbol first (its members), then to its parents, then the module.
                for base in range(len(path), -1, -1):
                    curated.add(path[:base] + tuple(parts))
        catalog = os.path.join(root, "Sources", target, target + ".docc")
        for page in sorted(glob.glob(os.path.join(catalog, "**", "*.md"), recursive=True)):
            lines = open(page, encoding="utf-8").read().splitlines()
            # An extension file (# ``Type``) curates relative to its type.
            title = HEADING.match(lines[0]) if lines else None
            base = ()
            if title and title.group(2).startswith("``") and title.group(2).strip("`") != target:
                base = tuple(normalize(title.group(2).strip("`"), target))
            for link in topic_links(lines):
                parts = tuple(normalize(link, target))
                curated.add(parts)
                curated.add(base + parts)
        missing = sorted("/".join(p) for p in types if p not in curated)
        print("docs: %s: %d public types, %d curated" % (target, len(types), len(types) - len(missing)))
        for name in missing:
            print("docs: %s: the public %s %s is in no Topics section; add `- ``%s``` to %s"
                  % (target, types[tuple(name.split("/"))].lower(), name, name,
                     os.path.relpath(os.path.join(catalog, target + ".md"), root)))
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
