#!/usr/bin/env python3
"""Checks the write gate's evaluation data (issue #14): data/injection/ and data/heldout_corpus/.

The data is hand-written (see the READMEs beside it); this script only checks it. It fails, listing
every problem, unless:

  data/injection/injection_{train,test}.jsonl
    - every line is a JSON object with exactly {text, label, category, form, split_note} (label
      "injection") or {text, label, style, split_note} (label "benign");
    - categories, forms and styles come from the closed sets below, and split_note starts with
      the file's split and names its channel (injections) or style (benign);
    - the two splits share no benign style and no injection channel, each split has at least three
      benign styles and every injection category;
    - the counts per file, label, category and style are the ones in EXPECTED_INJECTION (which
      data/injection/README.md states).

  data/heldout_corpus/<persona>_{memories,queries,poisons}.jsonl, for each persona:
    - memories are in the store's import format ({text, metadata, source}, the importer's limits),
      metadata has {category, persona, kind} and, for kind "fact_update" only, update_of: the text
      of an earlier memory of the same persona; 150-250 memories with at least 10 standing
      instructions and 10 fact updates;
    - queries are {query, category}, 50-80 of them;
    - poisons are {text, category, target, attack} (+ flood_id for paraphrase floods), 30-50 of
      them, every poison category present; target is the text of one of the persona's memories
      (required for misinformation, one-field edits and floods; null or a memory otherwise); a
      one-field edit differs from its target in at most two short spans; a flood has 5-8 poisons
      sharing its flood_id, target and attack;
    - the counts per file and category are the ones in EXPECTED_HELDOUT (which
      data/heldout_corpus/README.md states).

  Everywhere: files are ASCII with "\\n" line ends; no text occurs twice (case-folded, whitespace
  collapsed) within or across all these files, nor in data/corpora/*.jsonl; no poison equals a
  memory.

Usage:
  scripts/check_writegate_data.py [--root REPO_ROOT]     # exit 0 and one summary line if valid
"""
import argparse
import collections
import difflib
import json
import os
import re
import sys

MEMSAD_CATEGORIES = {
    "task_reminders", "calendar_events", "preferences", "factual_knowledge",
    "document_references", "configuration_settings", "conversation_history",
}
INJECTION_CATEGORIES = {
    "instruction_override", "role_authority_claim", "mode_switch", "addressing_model",
    "secrecy_directive", "credential_disclosure", "exfiltration_url", "exfiltration_email",
    "exfiltration_person_place", "tool_action_directive", "hidden_text",
}
FORMS = {
    "plain", "polite_indirect", "embedded", "role_header", "chat_template", "json", "yaml", "xml",
    "html_comment", "markdown_comment", "markdown_image", "css_hidden", "zero_width", "tag_chars",
    "homoglyph", "spaced_letters", "leetspeak", "base64", "non_english",
}
STYLES = {
    "train": {"terse_note", "voice_transcript", "email", "checklist", "dev_note"},
    "test": {"texting_lowercase", "non_native", "formal_policy", "quoted_message", "howto_note",
             "meeting_minutes"},
}
CHANNELS = {
    "train": {"chat", "web_page", "calendar_invite", "social_post"},
    "test": {"email", "shared_document", "tool_output", "group_chat", "voicemail_transcript",
             "imported_note", "sms"},
}
POISON_CATEGORIES = {
    "instruction_injection", "misinformation", "one_field_edit", "paraphrase_flood",
    "exfiltration", "odd_token_trigger",
}
POISON_NEEDS_TARGET = {"misinformation", "one_field_edit", "paraphrase_flood"}
PERSONAS = ("bakery", "student", "dental_desk")
KINDS = {"note", "standing_instruction", "fact_update"}

# Limits of the import format (src/cli/jsonl_import.h), as in scripts/gen_corpora.py.
MAX_TEXT_BYTES = 16 * 1024
MAX_METADATA_BYTES = 16 * 1024
MAX_LINE_BYTES = 1 << 20

# Counts the READMEs state. Injection: label -> count, then category and style counts per split.
EXPECTED_INJECTION = {
    "train": {
        "injection": 201, "benign": 668,
        "category": {"instruction_override": 27, "role_authority_claim": 23, "mode_switch": 18,
                     "addressing_model": 17, "secrecy_directive": 17,
                     "credential_disclosure": 17, "exfiltration_url": 16,
                     "exfiltration_email": 14, "exfiltration_person_place": 13,
                     "tool_action_directive": 21, "hidden_text": 18},
        "style": {"terse_note": 139, "voice_transcript": 132, "email": 132, "checklist": 132,
                  "dev_note": 133},
    },
    "test": {
        "injection": 303, "benign": 1002,
        "category": {"instruction_override": 36, "role_authority_claim": 31, "mode_switch": 26,
                     "addressing_model": 29, "secrecy_directive": 25,
                     "credential_disclosure": 28, "exfiltration_url": 27,
                     "exfiltration_email": 23, "exfiltration_person_place": 23,
                     "tool_action_directive": 31, "hidden_text": 24},
        "style": {"texting_lowercase": 196, "non_native": 189, "formal_policy": 181,
                  "quoted_message": 180, "howto_note": 189, "meeting_minutes": 67},
    },
}
# Held-out corpus: persona -> (memories, queries, {poison category: count}).
EXPECTED_HELDOUT = {
    "bakery": (166, 56, {"instruction_injection": 6, "misinformation": 8, "one_field_edit": 8,
                         "paraphrase_flood": 13, "exfiltration": 6, "odd_token_trigger": 4}),
    "student": (163, 54, {"instruction_injection": 6, "misinformation": 7, "one_field_edit": 8,
                          "paraphrase_flood": 13, "exfiltration": 6, "odd_token_trigger": 4}),
    "dental_desk": (158, 55, {"instruction_injection": 6, "misinformation": 8,
                              "one_field_edit": 8, "paraphrase_flood": 13, "exfiltration": 6,
                              "odd_token_trigger": 4}),
}


class Checker:
    """Collects errors; seen texts (normalized) map to where they first occurred."""

    def __init__(self):
        self.errors = []
        self.seen = {}

    def error(self, where, message):
        self.errors.append("%s: %s" % (where, message))

    def unique(self, text, where):
        key = re.sub(r"\s+", " ", text.casefold()).strip()
        if key in self.seen:
            self.error(where, "duplicate text (first at %s)" % self.seen[key])
        else:
            self.seen[key] = where


def read_jsonl(checker, path):
    """Returns [(where, object)] for a JSONL file; records errors for bad bytes or lines."""
    rows = []
    try:
        data = open(path, "rb").read()
    except OSError as e:
        checker.error(path, "cannot read: %s" % e)
        return rows
    if not data.endswith(b"\n") or b"\r" in data:
        checker.error(path, 'must end with "\\n" and use "\\n" line ends only')
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as e:
        checker.error(path, "not ASCII (write \\uXXXX escapes): %s" % e)
        return rows
    for number, line in enumerate(text.split("\n")[:-1], 1):
        where = "%s:%d" % (os.path.basename(path), number)
        if len(line) > MAX_LINE_BYTES:
            checker.error(where, "line longer than %d bytes" % MAX_LINE_BYTES)
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            checker.error(where, "invalid JSON: %s" % e)
            continue
        if not isinstance(obj, dict):
            checker.error(where, "not a JSON object")
            continue
        rows.append((where, obj))
    return rows


def check_text(checker, where, text, field="text"):
    """A non-blank string within the importer's limits; returns whether it is one."""
    if not isinstance(text, str) or not text.strip():
        checker.error(where, "%s must be a non-blank string" % field)
        return False
    if "\x00" in text or len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        checker.error(where, "%s has a NUL or exceeds %d bytes" % (field, MAX_TEXT_BYTES))
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        checker.error(where, "%s is not valid UTF-8 (lone surrogate)" % field)
        return False
    return True


def fields_are(checker, where, obj, required, optional=()):
    keys = set(obj)
    missing, extra = set(required) - keys, keys - set(required) - set(optional)
    if missing or extra:
        checker.error(where, "fields: missing %s, unexpected %s" % (sorted(missing), sorted(extra)))
        return False
    return True


# ----------------------------------------------------------------------------------------------
# data/injection/

def check_injection_row(checker, split, where, obj, counts, channels):
    label = obj.get("label")
    if label == "injection":
        if not fields_are(checker, where, obj, ("text", "label", "category", "form", "split_note")):
            return
        if obj["category"] not in INJECTION_CATEGORIES:
            checker.error(where, "unknown category %r" % obj["category"])
        if obj["form"] not in FORMS:
            checker.error(where, "unknown form %r" % obj["form"])
        m = re.match(r"%s: vector (\w+) " % split, str(obj["split_note"]))
        if not m or m.group(1) not in CHANNELS[split]:
            checker.error(where, "split_note must start with '%s: vector <channel>'" % split)
        else:
            channels.add(m.group(1))
        counts["category"][obj["category"]] += 1
    elif label == "benign":
        if not fields_are(checker, where, obj, ("text", "label", "style", "split_note")):
            return
        if obj["style"] not in STYLES[split]:
            checker.error(where, "style %r is not a %s style" % (obj["style"], split))
        if not str(obj["split_note"]).startswith("%s: style %s, persona " % (split, obj["style"])):
            checker.error(where, "split_note must start with '%s: style %s, persona'" % (
                split, obj["style"]))
        counts["style"][obj["style"]] += 1
    else:
        checker.error(where, "label must be injection or benign, not %r" % label)
        return
    counts[label] += 1
    if check_text(checker, where, obj["text"]):
        checker.unique(obj["text"], where)


def compare_counts(checker, where, what, got, want):
    if got != want:
        checker.error(where, "%s: counted %s, README states %s" % (what, got, want))


def check_injection(checker, root):
    channels_by_split, total = {}, 0
    for split in ("train", "test"):
        path = os.path.join(root, "data", "injection", "injection_%s.jsonl" % split)
        counts = {"injection": 0, "benign": 0, "category": collections.Counter(),
                  "style": collections.Counter()}
        channels = set()
        for where, obj in read_jsonl(checker, path):
            check_injection_row(checker, split, where, obj, counts, channels)
        channels_by_split[split] = channels
        total += counts["injection"] + counts["benign"]
        want = EXPECTED_INJECTION[split]
        name = os.path.basename(path)
        for key in ("injection", "benign"):
            compare_counts(checker, name, key, counts[key], want[key])
        for key in ("category", "style"):
            compare_counts(checker, name, key + " counts", dict(counts[key]), want[key])
        if len(counts["style"]) < 3 or set(counts["category"]) != INJECTION_CATEGORIES:
            checker.error(name, "needs >= 3 benign styles and every injection category")
    if STYLES["train"] & STYLES["test"] or channels_by_split["train"] & channels_by_split["test"]:
        checker.error("data/injection", "train and test share a style or a channel")
    return total


# ----------------------------------------------------------------------------------------------
# data/heldout_corpus/

def check_memory(checker, persona, where, obj, texts, kinds):
    if not fields_are(checker, where, obj, ("text", "metadata", "source")):
        return
    if obj["source"] not in ("user", "agent", "tool"):
        checker.error(where, "source must be user, agent or tool")
    md = obj["metadata"]
    if not isinstance(md, dict) or len(json.dumps(md).encode()) > MAX_METADATA_BYTES:
        checker.error(where, "metadata must be an object of at most %d bytes" % MAX_METADATA_BYTES)
        return
    kind = md.get("kind")
    optional = ("update_of",) if kind == "fact_update" else ()
    if not fields_are(checker, where, md, ("category", "persona", "kind") + optional):
        return
    if md["category"] not in MEMSAD_CATEGORIES or md["persona"] != persona or kind not in KINDS:
        checker.error(where, "metadata category/persona/kind not from the closed sets")
    if kind == "fact_update" and md["update_of"] not in texts:
        checker.error(where, "update_of is not the text of an earlier memory of this persona")
    kinds[kind] += 1
    if check_text(checker, where, obj["text"]):
        checker.unique(obj["text"], where)
        texts.add(obj["text"])


def check_queries(checker, path):
    rows = read_jsonl(checker, path)
    for where, obj in rows:
        if not fields_are(checker, where, obj, ("query", "category")):
            continue
        if obj["category"] not in MEMSAD_CATEGORIES:
            checker.error(where, "unknown category %r" % obj["category"])
        if check_text(checker, where, obj["query"], "query"):
            checker.unique(obj["query"], where)
    return len(rows)


def one_field_edit_ok(target, text):
    """At most two differing spans of at most three words each (a time, date, amount, name)."""
    a, b = text_words(target), text_words(text)
    ops = [op for op in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
           if op[0] != "equal"]
    return 1 <= len(ops) <= 2 and all(max(i2 - i1, j2 - j1) <= 3 for _, i1, i2, j1, j2 in ops)


def text_words(text):
    return re.findall(r"\S+", text)


def check_poison(checker, where, obj, texts, floods, counts):
    optional = ("flood_id",) if obj.get("category") == "paraphrase_flood" else ()
    if not fields_are(checker, where, obj, ("text", "category", "target", "attack") + optional):
        return
    category, target = obj["category"], obj["target"]
    if category not in POISON_CATEGORIES:
        checker.error(where, "unknown category %r" % category)
        return
    counts[category] += 1
    if not check_text(checker, where, obj["attack"], "attack"):
        return
    if target is None and category in POISON_NEEDS_TARGET:
        checker.error(where, "%s needs a target" % category)
    elif target is not None and target not in texts:
        checker.error(where, "target is not the text of a memory of this persona")
    elif category == "one_field_edit" and not one_field_edit_ok(target, obj["text"]):
        checker.error(where, "one_field_edit differs from its target in more than one field")
    if optional:
        floods[obj["flood_id"]].append((target, obj["attack"]))
    if check_text(checker, where, obj["text"]):
        if obj["text"] in texts:
            checker.error(where, "poison equals a memory")
        checker.unique(obj["text"], where)


def check_persona(checker, root, persona):
    base = os.path.join(root, "data", "heldout_corpus", persona)
    texts, kinds = set(), collections.Counter()
    memories = read_jsonl(checker, base + "_memories.jsonl")
    for where, obj in memories:
        check_memory(checker, persona, where, obj, texts, kinds)
    queries = check_queries(checker, base + "_queries.jsonl")
    floods, counts = collections.defaultdict(list), collections.Counter()
    poisons = read_jsonl(checker, base + "_poisons.jsonl")
    for where, obj in poisons:
        check_poison(checker, where, obj, texts, floods, counts)
    for flood_id, members in sorted(floods.items()):
        if not 5 <= len(members) <= 8 or len(set(members)) != 1:
            checker.error(persona, "flood %s: 5-8 poisons sharing one target and attack" % flood_id)
    want_memories, want_queries, want_poisons = EXPECTED_HELDOUT[persona]
    compare_counts(checker, persona, "memories", len(memories), want_memories)
    compare_counts(checker, persona, "queries", queries, want_queries)
    compare_counts(checker, persona, "poison counts", dict(counts), want_poisons)
    if not (150 <= len(memories) <= 250 and 50 <= queries <= 80 and 30 <= len(poisons) <= 50):
        checker.error(persona, "needs 150-250 memories, 50-80 queries, 30-50 poisons")
    if kinds["standing_instruction"] < 10 or kinds["fact_update"] < 10:
        checker.error(persona, "needs >= 10 standing instructions and >= 10 fact updates")
    if set(counts) != POISON_CATEGORIES:
        checker.error(persona, "poisons must cover every category")
    return len(memories) + queries + len(poisons)


def check_corpora_overlap(checker, root):
    """No held-out or injection text may also be in data/corpora/ (the tuning corpora)."""
    folder = os.path.join(root, "data", "corpora")
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".jsonl"):
            continue
        for where, obj in read_jsonl(checker, os.path.join(folder, name)):
            for field in ("text", "query"):
                value = obj.get(field)
                if isinstance(value, str):
                    key = re.sub(r"\s+", " ", value.casefold()).strip()
                    if key in checker.seen:
                        checker.error(checker.seen[key], "text also in data/corpora (%s)" % where)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    args = parser.parse_args()
    checker = Checker()
    lines = check_injection(checker, args.root)
    lines += sum(check_persona(checker, args.root, p) for p in PERSONAS)
    check_corpora_overlap(checker, args.root)
    if checker.errors:
        for e in checker.errors:
            print("error: " + e, file=sys.stderr)
        sys.exit("%d problem(s) in the write gate's evaluation data" % len(checker.errors))
    print("write gate evaluation data valid: %d lines, %d distinct texts" % (
        lines, len(checker.seen)))


if __name__ == "__main__":
    main()
