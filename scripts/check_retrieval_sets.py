#!/usr/bin/env python3
"""Checks the labelled retrieval evaluation sets in data/retrieval/ (issue #19, point 1).

Each persona has a pair of files:

  <persona>_memories.jsonl  the store's import format, one object a line:
                            {"text": "...", "metadata": {"persona": "<persona>", "topic": "..."},
                             "source": "user|agent|tool|system|import"}
  <persona>_queries.jsonl   labelled queries, one object a line:
                            {"query": "...", "relevant": ["<memory text>", ...], "group": "..."}

Rules (every one is an error, exit status 1):
  - the files are UTF-8 (strict), NFC-normalized, "\\n" line ends, a final newline, no blank
    lines, no control characters in any string;
  - every memory line passes the importer's rules (src/cli/jsonl_import.h: known fields only, text
    a non-blank string of at most 16 KiB without NUL, metadata an object of at most 16 KiB, source
    one of user/agent/tool/system/import), has no leading or trailing blanks, 5-60 words, and
    metadata.persona equal to the file's persona;
  - no two memories of one persona, and no two personas, share a text (case- and blank-folded);
  - every query line has exactly the fields query, relevant, group; a non-blank query not repeated
    in the file (case-folded); a group from GROUPS; 1-3 relevant texts, no repeats, each exactly
    the text of a memory of the same persona; group "multi" has 2-3 relevant, the others 1-2;
  - each persona has MEMORIES_RANGE memories and QUERIES_RANGE queries, every persona in PERSONAS
    has both files and no other *_memories.jsonl / *_queries.jsonl file exists.

Usage:
  scripts/check_retrieval_sets.py [--dir data/retrieval]          # check; print one line on success
  scripts/check_retrieval_sets.py --stats                          # also print counts per persona
                                                                   # and group, and word overlap
Standard library only.
"""
import argparse
import json
import os
import re
import sys
import unicodedata

# Persona -> split. Ranking may be tuned on the "tuning" personas; the "reporting" personas are for
# the numbers in doc/retrieval.md only and are never tuned on (see data/retrieval/README.md).
PERSONAS = (
    ("retired_teacher", "tuning"),
    ("oncall_engineer", "tuning"),
    ("night_nurse", "reporting"),
    ("restaurant_owner", "reporting"),
)
GROUPS = ("lexical", "paraphrase", "multi", "temporal", "person", "instruction")
MEMORIES_RANGE = (120, 160)
QUERIES_RANGE = (60, 80)
WORDS_RANGE = (5, 60)

# The importer's limits (src/cli/jsonl_import.h, as scripts/gen_corpora.py restates them).
MAX_TEXT_BYTES = 16 * 1024
MAX_METADATA_BYTES = 16 * 1024
MAX_LINE_BYTES = 1 << 20
IMPORT_FIELDS = {"text", "metadata", "source"}
SOURCES = {"user", "agent", "tool", "system", "import"}
QUERY_FIELDS = {"query", "relevant", "group"}

# For --stats only: a crude content-word overlap between a query and its relevant memories.
STOPWORDS = set("""
a an the and or but if of to in on at by for from with about as into is are was were be been am
do does did doing have has had i me my mine we us our you your he him his she her they them their
it its this that these those what which who whom whose when where why how can could should would
will shall may might must not no any all some each every there here than then so too very just
over under up down out off again once s t don get got go going much many more most other such own
same only also like
""".split())


def fold(text):
    """Case- and blank-folded key for duplicate detection."""
    return " ".join(text.casefold().split())


def has_control(text):
    return any(unicodedata.category(c) == "Cc" for c in text)


def strings_in(value):
    """Every string inside a decoded JSON value (keys included)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def read_lines(path, errors):
    """The decoded lines of a JSONL file, or None (and an error) if the bytes are not clean."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        errors.append("%s: %s" % (path, e))
        return None
    name = os.path.basename(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        errors.append("%s: not UTF-8 (%s)" % (name, e))
        return None
    if text.startswith("\ufeff"):
        errors.append("%s: starts with a byte-order mark" % name)
    if "\r" in text:
        errors.append("%s: has carriage returns" % name)
    if not text.endswith("\n"):
        errors.append("%s: no final newline" % name)
    if unicodedata.normalize("NFC", text) != text:
        errors.append("%s: not NFC-normalized" % name)
    lines = text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    out = []
    for i, line in enumerate(lines, 1):
        where = "%s:%d" % (name, i)
        if not line.strip():
            errors.append("%s: blank line" % where)
            continue
        if len(line.encode("utf-8")) > MAX_LINE_BYTES:
            errors.append("%s: line longer than %d bytes" % (where, MAX_LINE_BYTES))
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            errors.append("%s: invalid JSON (%s)" % (where, e))
            continue
        if not isinstance(obj, dict):
            errors.append("%s: not a JSON object" % where)
            continue
        if any(has_control(s) for s in strings_in(obj)):
            errors.append("%s: control character in a string" % where)
            continue
        out.append((where, obj))
    return out


def memory_error(obj, persona):
    """Why one memory object breaks the importer's or this set's rules, or None."""
    unknown = set(obj) - IMPORT_FIELDS
    if unknown:
        return "unknown field(s) %s" % sorted(unknown)
    text = obj.get("text")
    if not isinstance(text, str):
        return "text missing or not a string"
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        return "text is not valid UTF-8 (lone surrogate)"
    if len(raw) > MAX_TEXT_BYTES or "\0" in text or not text.strip():
        return "text too long, has NUL or is blank"
    if text != text.strip():
        return "text has leading or trailing blanks"
    words = len(text.split())
    if not WORDS_RANGE[0] <= words <= WORDS_RANGE[1]:
        return "text has %d words, want %d-%d" % (words, WORDS_RANGE[0], WORDS_RANGE[1])
    meta = obj.get("metadata", {})
    if not isinstance(meta, dict):
        return "metadata not an object"
    meta_bytes = json.dumps(meta, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if len(meta_bytes.encode("utf-8")) > MAX_METADATA_BYTES:
        return "metadata too large"
    if meta.get("persona") != persona:
        return "metadata.persona is %r, want %r" % (meta.get("persona"), persona)
    if not isinstance(meta.get("topic"), str) or not meta["topic"]:
        return "metadata.topic missing"
    if obj.get("source", "import") not in SOURCES:
        return "bad source %r" % obj.get("source")
    return None


def query_error(obj, memory_texts):
    """Why one labelled query breaks the rules, or None."""
    if set(obj) != QUERY_FIELDS:
        return "fields are %s, want %s" % (sorted(obj), sorted(QUERY_FIELDS))
    query, relevant, group = obj["query"], obj["relevant"], obj["group"]
    if not isinstance(query, str) or not query.strip() or query != query.strip():
        return "query missing, blank or padded"
    if group not in GROUPS:
        return "unknown group %r" % group
    if not isinstance(relevant, list) or not all(isinstance(r, str) for r in relevant):
        return "relevant is not a list of strings"
    lo, hi = (2, 3) if group == "multi" else (1, 2)
    if not lo <= len(relevant) <= hi:
        return "%d relevant texts, group %s wants %d-%d" % (len(relevant), group, lo, hi)
    if len(set(relevant)) != len(relevant):
        return "a relevant text is listed twice"
    for r in relevant:
        if r not in memory_texts:
            return "relevant text is not a memory of this persona: %r" % r
    return None


def check_persona(directory, persona, errors):
    """Checks one persona's pair of files; returns (memories, queries) as decoded objects."""
    memories, queries = [], []
    mem_lines = read_lines(os.path.join(directory, persona + "_memories.jsonl"), errors)
    seen = {}
    for where, obj in mem_lines or []:
        err = memory_error(obj, persona)
        if err:
            errors.append("%s: %s" % (where, err))
            continue
        key = fold(obj["text"])
        if key in seen:
            errors.append("%s: duplicate of %s: %r" % (where, seen[key], obj["text"]))
            continue
        seen[key] = where
        memories.append(obj)
    texts = set(m["text"] for m in memories)
    query_lines = read_lines(os.path.join(directory, persona + "_queries.jsonl"), errors)
    seen = {}
    for where, obj in query_lines or []:
        err = query_error(obj, texts)
        if err:
            errors.append("%s: %s" % (where, err))
            continue
        key = fold(obj["query"])
        if key in seen:
            errors.append("%s: query repeats %s: %r" % (where, seen[key], obj["query"]))
            continue
        if key in (fold(t) for t in texts):
            errors.append("%s: query equals a memory text" % where)
        seen[key] = where
        queries.append(obj)
    if mem_lines is not None and not MEMORIES_RANGE[0] <= len(mem_lines) <= MEMORIES_RANGE[1]:
        errors.append("%s: %d memories, want %d-%d" % (persona, len(mem_lines), *MEMORIES_RANGE))
    if query_lines is not None and not QUERIES_RANGE[0] <= len(query_lines) <= QUERIES_RANGE[1]:
        errors.append("%s: %d queries, want %d-%d" % (persona, len(query_lines), *QUERIES_RANGE))
    return memories, queries


def check_all(directory):
    """(errors, {persona: (memories, queries)}) for every persona in PERSONAS."""
    errors, sets, owner = [], {}, {}
    for persona, _ in PERSONAS:
        memories, queries = check_persona(directory, persona, errors)
        sets[persona] = (memories, queries)
        for m in memories:
            key = fold(m["text"])
            if key in owner and owner[key] != persona:
                errors.append("%s and %s share the memory %r" % (owner[key], persona, m["text"]))
            owner[key] = persona
    known = set()
    for persona, _ in PERSONAS:
        known.update((persona + "_memories.jsonl", persona + "_queries.jsonl"))
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        return errors + ["%s: %s" % (directory, e)], sets
    for name in names:
        if re.search(r"_(memories|queries)\.jsonl$", name) and name not in known:
            errors.append("%s: not a persona listed in PERSONAS" % name)
    return errors, sets


def content_words(text):
    words = re.findall(r"[a-z0-9]+", text.casefold())
    stems = set()
    for w in words:
        if w in STOPWORDS or len(w) < 2:
            continue
        for suffix in ("ing", "ies", "es", "ed", "s"):
            if w.endswith(suffix) and len(w) - len(suffix) >= 3:
                w = w[: -len(suffix)]
                break
        stems.add(w)
    return stems


def overlap(query, relevant):
    """Largest share of the query's content words found in one relevant memory (0..1)."""
    q = content_words(query)
    if not q:
        return 0.0
    return max(len(q & content_words(r)) / len(q) for r in relevant)


def print_stats(sets):
    split = dict(PERSONAS)
    print("%-17s %-9s %4s %4s %s" % ("persona", "split", "mem", "qry",
                                     " ".join("%5s" % g[:5] for g in GROUPS)))
    for persona, _ in PERSONAS:
        memories, queries = sets[persona]
        counts = [sum(q["group"] == g for q in queries) for g in GROUPS]
        print("%-17s %-9s %4d %4d %s" % (persona, split[persona], len(memories), len(queries),
                                         " ".join("%5d" % c for c in counts)))
    print()
    print("query/relevant content-word overlap (share of the query's content words in the best")
    print("relevant memory; crude suffix stemming, stopwords dropped), all personas:")
    print("%-12s %5s %9s %9s %12s" % ("group", "n", "mean", "zero", "relevant>1"))
    rows = [(g, [q for _, (_, qs) in sets.items() for q in qs if q["group"] == g]) for g in GROUPS]
    rows.append(("all", [q for _, (_, qs) in sets.items() for q in qs]))
    for group, qs in rows:
        if not qs:
            continue
        ov = [overlap(q["query"], q["relevant"]) for q in qs]
        print("%-12s %5d %9.2f %9d %12d" % (group, len(qs), sum(ov) / len(ov),
                                            sum(o == 0 for o in ov),
                                            sum(len(q["relevant"]) > 1 for q in qs)))
    sources, topics = {}, {}
    for _, (memories, _) in sets.items():
        for m in memories:
            sources[m.get("source", "import")] = sources.get(m.get("source", "import"), 0) + 1
            topics[m["metadata"]["topic"]] = topics.get(m["metadata"]["topic"], 0) + 1
    print()
    print("memory sources: " + ", ".join("%s %d" % kv for kv in sorted(sources.items())))
    print("memory topics: " + ", ".join("%s %d" % kv for kv in sorted(topics.items())))


def main():
    repo = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=os.path.join(repo, "data", "retrieval"))
    parser.add_argument("--stats", action="store_true", help="print counts and word overlap")
    args = parser.parse_args()
    errors, sets = check_all(args.dir)
    if errors:
        for e in errors[:50]:
            print("error: " + e, file=sys.stderr)
        if len(errors) > 50:
            print("error: ... and %d more" % (len(errors) - 50), file=sys.stderr)
        sys.exit(1)
    if args.stats:
        print_stats(sets)
        print()
    print("retrieval sets valid: %d personas, %d memories, %d labelled queries" % (
        len(sets), sum(len(m) for m, _ in sets.values()), sum(len(q) for _, q in sets.values())))


if __name__ == "__main__":
    main()
