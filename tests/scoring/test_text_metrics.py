"""chrF, BLEU and character ROUGE-L as registered per-sample metrics, against hand-computed values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mmtasks.errors import DataError
from mmtasks.scoring.text_metrics import bleu, bleu_zh, chrf, lcs_length, rouge_l_char

REPO = Path(__file__).resolve().parents[2]
DOC = {"id": "d-1"}


def test_chrf_hand_computed() -> None:
    # hyp "abc", ref "abd": character 1-grams match 2 of 3 both ways, 2-grams 1 of 2
    # ("ab"), 3-grams 0 of 1; orders 4-6 have no n-grams and are not averaged.
    # Mean P = mean R = (2/3 + 1/2 + 0) / 3 = 7/18; with P == R the F-beta is P.
    assert chrf("abc", "abd", DOC) == pytest.approx(100 * 7 / 18)
    assert chrf("same text", "same text", DOC) == pytest.approx(100.0)
    # whitespace is ignored by chrF's character n-grams
    assert chrf("a b c", "abd", DOC) == pytest.approx(100 * 7 / 18)


def test_bleu_hand_computed() -> None:
    # hyp "a b c d", ref "a b c e": n-gram precisions 3/4, 2/3, 1/2 and 0/1; sacrebleu's
    # exp smoothing turns the zero 4-gram count into 1/(2*1). Same length: no brevity penalty.
    # BLEU = (3/4 * 2/3 * 1/2 * 1/2) ** (1/4) = (1/8) ** (1/4) = 2 ** -0.75
    assert bleu("a b c d", "a b c e", DOC) == pytest.approx(100 * 2 ** -0.75)
    assert bleu("the cat sat down", "the cat sat down", DOC) == pytest.approx(100.0)


def test_bleu_zh_splits_chinese_characters() -> None:
    # zh tokenizer: one token per character. 今天天气很好 vs 今天天气不错:
    # 1-grams 4/6, 2-grams 3/5 (今天 天天 天气), 3-grams 2/4, 4-grams 1/3 -> (1/15) ** (1/4)
    assert bleu_zh("今天天气很好", "今天天气不错", DOC) == pytest.approx(100 * (1 / 15) ** 0.25)
    # the default 13a tokenizer sees each sentence as one token: no match at all
    assert bleu("今天天气很好", "今天天气不错", DOC) == pytest.approx(0.0)


def test_lcs_length() -> None:
    assert lcs_length("abcde", "abxde") == 4
    assert lcs_length("", "abc") == 0
    assert lcs_length("ab", "ba") == 1
    assert lcs_length("今天天气很好", "今天天气不错") == 4


@pytest.mark.parametrize(("hyp", "ref", "expected"), [
    ("abcde", "abxde", 80.0),                    # LCS abde: P = R = 4/5
    ("今天天气很好", "今天天气不错", 100 * 4 / 6),  # LCS 今天天气: P = R = 4/6
    ("ab", "abcd", 100 * 2 / 3),                  # P = 1, R = 1/2: F1 = 2 * 0.5 / 1.5
    ("a b", "ab", 100.0),                         # whitespace removed
    ("AB", "ab", 0.0),                            # case kept
    ("xyz", "abc", 0.0),
    ("", "abc", 0.0),
])
def test_rouge_l_char_hand_computed(hyp: str, ref: str, expected: float) -> None:
    assert rouge_l_char(hyp, ref, DOC) == pytest.approx(expected)


@pytest.mark.parametrize("fn", [chrf, bleu, bleu_zh, rouge_l_char])
def test_unparsed_scores_zero_and_bad_targets_are_data_errors(fn) -> None:
    assert fn(None, "reference", DOC) == 0.0
    with pytest.raises(DataError, match="non-empty string") as info:
        fn("x", 3, DOC)
    assert info.value.doc_id == "d-1"
    with pytest.raises(DataError):
        fn("x", "  ", DOC)


def test_registered_as_builtin_metrics() -> None:
    # A fresh interpreter: the names resolve through the registry's own built-in modules.
    code = ("from mmtasks.registry import metrics; "
            "print(sorted(n for n in ('chrf', 'bleu', 'bleu_zh', 'rouge_l_char') if metrics.get(n)))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         cwd=REPO, env=env)
    assert out.stdout.split() == ["['bleu',", "'bleu_zh',", "'chrf',", "'rouge_l_char']"]
