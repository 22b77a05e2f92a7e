#!/usr/bin/env python3
"""check_report.py DIR: structural checks of a faultline report directory.

index.html (and every run-*.html) must parse with html.parser with balanced
non-void elements, hold one inline <svg> per run page, exactly one inline
<script> without src, no event-handler attributes and nothing loaded from the
network. junit.xml must parse with xml.etree and its counts (tests, failures,
errors) must match the <testcase>, <failure> and <error> elements. Exit 1 with a
message on the first problem.
"""
import glob
import json
import os
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}
SVG_SELF = {"rect", "line", "path", "circle", "polyline", "polygon", "text", "g", "title"}


class Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems = [], []
        self.svg = self.scripts = 0

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k.startswith("on"):
                self.problems.append("event handler attribute %s on <%s>" % (k, tag))
            if k in ("src", "href") and v and ("://" in v or v.startswith("//")):
                self.problems.append("external reference %s=%r" % (k, v))
        if tag == "svg":
            self.svg += 1
        if tag == "script":
            self.scripts += 1
            if any(k == "src" for k, _ in attrs):
                self.problems.append("<script src>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID and tag not in SVG_SELF:
            self.problems.append("self-closed <%s/>" % tag)
        for k, _ in attrs:
            if k.startswith("on"):
                self.problems.append("event handler attribute %s" % k)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append("unbalanced </%s> (open: %s)" % (tag, self.stack[-4:]))
            return
        self.stack.pop()


def check_html(path, is_run_page):
    with open(path, encoding="utf-8") as f:  # must be valid UTF-8
        text = f.read()
    c = Checker()
    c.feed(text)
    c.close()
    if c.stack:
        c.problems.append("unclosed elements %s" % c.stack[-5:])
    if is_run_page and c.svg != 1:
        c.problems.append("%d <svg> elements" % c.svg)
    if is_run_page and c.scripts != 1:
        c.problems.append("%d <script> elements" % c.scripts)
    if not text.startswith("<!DOCTYPE html>"):
        c.problems.append("no doctype")
    return ["%s: %s" % (path, p) for p in c.problems[:10]]


def check_junit(path):
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        return ["%s: root is <%s>" % (path, root.tag)]
    cases = root.findall("./testsuite/testcase")
    fails = root.findall("./testsuite/testcase/failure")
    errs = root.findall("./testsuite/testcase/error")
    problems = []
    if int(root.get("tests")) != len(cases):
        problems.append("tests=%s but %d testcases" % (root.get("tests"), len(cases)))
    if int(root.get("failures")) != len(fails):
        problems.append("failures=%s but %d <failure>" % (root.get("failures"), len(fails)))
    if int(root.get("errors")) != len(errs):
        problems.append("errors=%s but %d <error>" % (root.get("errors"), len(errs)))
    for suite in root.findall("testsuite"):
        if int(suite.get("tests")) != len(suite.findall("testcase")):
            problems.append("suite %r count mismatch" % suite.get("name"))
    for case in cases:
        if not case.get("classname") or not case.get("name", "").startswith("seed "):
            problems.append("testcase without classname/seed name")
    for f in fails + errs:
        if not f.get("message"):
            problems.append("<%s> without message" % f.tag)
    return ["%s: %s" % (path, p) for p in problems]


def main():
    d = sys.argv[1]
    problems = []
    pages = sorted(glob.glob(os.path.join(d, "run-*.html")))
    problems += check_html(os.path.join(d, "index.html"), not pages)
    for p in pages:
        problems += check_html(p, True)
    problems += check_junit(os.path.join(d, "junit.xml"))
    with open(os.path.join(d, "summary.json"), encoding="utf-8") as f:
        json.load(f)
    if problems:
        print("\n".join(problems))
        return 1
    print("report %s: ok (%d run pages)" % (d, max(1, len(pages))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
