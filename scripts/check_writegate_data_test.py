#!/usr/bin/env python3
"""Tests scripts/check_writegate_data.py: the shipped data passes, and each kind of broken data
(one mutation of a copy of data/ per test) fails with an error that names the problem.

Usage: scripts/check_writegate_data_test.py    (standard library only; also a CTest)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHECKER = os.path.join(HERE, "check_writegate_data.py")


def run_checker(root):
    """Returns (exit code, stderr) of the checker on a repository root."""
    proc = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True,
                          text=True, check=False)
    return proc.returncode, proc.stderr


class CheckWritegateDataTest(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="writegate-data-")
        for folder in ("injection", "heldout_corpus", "corpora"):
            shutil.copytree(os.path.join(ROOT, "data", folder),
                            os.path.join(self.root, "data", folder))

    def tearDown(self):
        shutil.rmtree(self.root)

    def path(self, name):
        folder = "injection" if name.startswith("injection") else "heldout_corpus"
        return os.path.join(self.root, "data", folder, name)

    def rows(self, name):
        with open(self.path(name), encoding="ascii") as f:
            return [json.loads(line) for line in f]

    def write_rows(self, name, rows):
        with open(self.path(name), "w", encoding="ascii", newline="\n") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=True) + "\n")

    def assert_fails_with(self, needle):
        code, err = run_checker(self.root)
        self.assertNotEqual(code, 0, "checker accepted broken data")
        self.assertIn(needle, err)

    def test_shipped_data_passes(self):
        code, err = run_checker(ROOT)
        self.assertEqual(code, 0, err)

    def test_unknown_injection_category(self):
        rows = self.rows("injection_train.jsonl")
        next(r for r in rows if r["label"] == "injection")["category"] = "jailbreak"
        self.write_rows("injection_train.jsonl", rows)
        self.assert_fails_with("unknown category 'jailbreak'")

    def test_benign_style_of_the_other_split(self):
        rows = self.rows("injection_test.jsonl")
        row = next(r for r in rows if r["label"] == "benign")
        row["style"], row["split_note"] = "email", "test: style email, persona x"
        self.write_rows("injection_test.jsonl", rows)
        self.assert_fails_with("style 'email' is not a test style")

    def test_duplicate_across_splits(self):
        row = dict(self.rows("injection_train.jsonl")[-1])
        row["style"] = "howto_note"
        row["split_note"] = "test: style howto_note, persona x"
        self.write_rows("injection_test.jsonl", self.rows("injection_test.jsonl") + [row])
        self.assert_fails_with("duplicate text (first at injection_train.jsonl")

    def test_count_differs_from_readme(self):
        self.write_rows("injection_test.jsonl", self.rows("injection_test.jsonl")[:-1])
        self.assert_fails_with("README states")

    def test_invalid_json_line(self):
        with open(self.path("student_queries.jsonl"), "a", encoding="ascii") as f:
            f.write('{"query": \n')
        self.assert_fails_with("invalid JSON")

    def test_non_ascii_file(self):
        with open(self.path("bakery_queries.jsonl"), "a", encoding="utf-8") as f:
            f.write('{"query": "Wie sp\u00e4t?", "category": "calendar_events"}\n')
        self.assert_fails_with("not ASCII")

    def test_update_of_names_no_memory(self):
        rows = self.rows("bakery_memories.jsonl")
        next(r for r in rows if "update_of" in r["metadata"])["metadata"]["update_of"] += " x"
        self.write_rows("bakery_memories.jsonl", rows)
        self.assert_fails_with("update_of is not the text of an earlier memory")

    def test_extra_import_field(self):
        rows = self.rows("student_memories.jsonl")
        rows[0]["id"] = 1
        self.write_rows("student_memories.jsonl", rows)
        self.assert_fails_with("unexpected ['id']")

    def test_target_names_no_memory(self):
        rows = self.rows("dental_desk_poisons.jsonl")
        next(r for r in rows if r["target"])["target"] = "no such memory"
        self.write_rows("dental_desk_poisons.jsonl", rows)
        self.assert_fails_with("target is not the text of a memory")

    def test_misinformation_without_target(self):
        rows = self.rows("student_poisons.jsonl")
        next(r for r in rows if r["category"] == "misinformation")["target"] = None
        self.write_rows("student_poisons.jsonl", rows)
        self.assert_fails_with("misinformation needs a target")

    def test_one_field_edit_rewritten(self):
        rows = self.rows("bakery_poisons.jsonl")
        edit = next(r for r in rows if r["category"] == "one_field_edit")
        edit["text"] = "A completely different sentence about the ovens and the flour today."
        self.write_rows("bakery_poisons.jsonl", rows)
        self.assert_fails_with("differs from its target in more than one field")

    def test_flood_too_small(self):
        rows = self.rows("dental_desk_poisons.jsonl")
        flood = [r for r in rows if r.get("flood_id") == "dc-f1"]
        self.write_rows("dental_desk_poisons.jsonl", [r for r in rows if r not in flood[4:]])
        self.assert_fails_with("flood dc-f1")

    def test_poison_equal_to_memory(self):
        rows = self.rows("bakery_poisons.jsonl")
        rows[0]["text"] = self.rows("bakery_memories.jsonl")[0]["text"]
        self.write_rows("bakery_poisons.jsonl", rows)
        self.assert_fails_with("poison equals a memory")

    def test_text_also_in_data_corpora(self):
        corpora = os.path.join(self.root, "data", "corpora", "benign_memories.jsonl")
        with open(corpora, encoding="ascii") as f:
            taken = json.loads(f.readline())["text"]
        rows = self.rows("student_memories.jsonl")
        rows[-1]["text"] = taken
        self.write_rows("student_memories.jsonl", rows)
        self.assert_fails_with("text also in data/corpora")


if __name__ == "__main__":
    unittest.main()
