#!/usr/bin/env python3
"""Writes char_trigrams.tsv: character trigram counts of English words, from WordNet 3.0.

The odd-token detector (src/detect/odd_token_detector.cc) scores each token of a write by its
per-character log-likelihood under these counts. Words are the lemmas of WordNet's index files
(each once; "_" and "-" split compounds) and the words of its glosses (each occurrence: frequent
words weigh more), lower-cased, letters a-z only. Each word is padded as "^^word$"; a line is
"abc<TAB>count" with '^' for the start and '$' for the end. Regenerate with
  data/odd_token/make_char_trigrams.py /usr/share/wordnet > data/odd_token/char_trigrams.tsv
(Debian package wordnet-base).
"""
import collections
import os
import re
import sys

WORD = re.compile(r"[a-z]+")


def words(wordnet_dir):
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(wordnet_dir, "index." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue  # the license header
                yield from WORD.findall(line.split(" ", 1)[0].lower())
        with open(os.path.join(wordnet_dir, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue
                yield from WORD.findall(line.split("|", 1)[1].lower())


def main():
    counts = collections.Counter()
    for w in words(sys.argv[1]):
        padded = "^^" + w + "$"
        for i in range(len(padded) - 2):
            counts[padded[i:i + 3]] += 1
    for tri in sorted(counts):
        print(f"{tri}\t{counts[tri]}")


if __name__ == "__main__":
    main()
