"""The metrics of document, chart and scene-text question answering, written once for every task
that uses them: ANLS (DocVQA, InfographicVQA, ST-VQA), relaxed accuracy (ChartQA, PlotQA) and the
VQA accuracy with its answer normalisation (VQA v2, TextVQA, VizWiz).

Each follows the rule of the reference code its benchmark's authors score with, quirks included
(each is stated where it is implemented); the tests of the benchmark folders run that code
verbatim on the same replies (``tasks/docvqa``, ``tasks/chartqa``, ``tasks/textvqa``):

- **ANLS** (Biten et al., ICCV 2019, Eq. 1; the ST-VQA/DocVQA/InfographicVQA evaluation of the
  Robust Reading Competition): per reference, the Levenshtein distance of the reply and the
  reference, both lowercased with runs of whitespace made one space and ends stripped, divided by
  the longer of the two *as given* (unnormalised lengths); the question scores 1 - the smallest
  such ratio, or 0 when that is below the threshold (0.5).
- **Relaxed accuracy** (ChartQA, Masry et al. 2022, section 5.1, after Methani et al. 2020; the
  rule of pix2struct's ``relaxed_correctness``): a reply that reads as a number (``float()``, a
  final ``%`` dividing by 100) is right within 5% of a non-zero numeric reference; otherwise the
  two must be equal without case.
- **VQA accuracy** (Antol et al. 2015; the VQA evaluation script ``vqaEval.py``): the reply and
  the human answers normalised (punctuation, number words, articles, contractions); for each of
  the n human answers left out in turn, min(1, matches among the other n-1 / 3); the mean of the n.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mmtasks.errors import DataError
from mmtasks.registry import metrics
from mmtasks.scoring.metrics import MetricArgs, takes_args, takes_references

# --- ANLS ------------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    """The edit distance (insertions, deletions, substitutions of one character each)."""
    if len(a) > len(b):
        a, b = b, a
    row = list(range(len(a) + 1))
    for j, cb in enumerate(b, start=1):
        prev, row[0] = row[0], j
        for i, ca in enumerate(a, start=1):
            prev, row[i] = row[i], prev if ca == cb else 1 + min(prev, row[i], row[i - 1])
    return row[-1]


def _anls_form(text: str) -> str:
    return " ".join(text.strip().lower().split())


def anls(prediction: str, answers: Sequence[str], threshold: float = 0.5) -> float:
    """The ANLS of one reply against its references (0-1): 1 - the smallest normalised distance,
    0 when that is below ``threshold``. The distance is taken between the lowercased,
    whitespace-collapsed forms; the length it is divided by is the longer of the reference and
    the reply as given (``len(s.upper())``, as the RRC script measures it), an empty pair counting
    0. A threshold exactly reached keeps its score (the script drops only a result below it)."""
    ratios = []
    det = _anls_form(prediction)
    for answer in answers:
        length = max(len(answer.upper()), len(prediction.upper()))
        ratios.append(0.0 if length == 0 else levenshtein(_anls_form(answer), det) / length)
    score = 1 - min(ratios)
    return 0.0 if score < threshold else score


# --- relaxed accuracy ------------------------------------------------------


def _as_float(text: str) -> float | None:
    try:
        return float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        return None


def relaxed_correct(prediction: str, target: str, max_relative_change: float = 0.05) -> bool:
    """ChartQA's relaxed match: both read as numbers (Python's ``float``, so " 12", "1e3", "nan"
    too; a final "%" divides by 100) and the reference non-zero: within ``max_relative_change`` of
    it; otherwise equal without case (a reference of 0 is matched as text: "0.0" is not "0")."""
    pred, gold = _as_float(prediction), _as_float(target)
    if pred is not None and gold:
        return abs(pred - gold) / abs(gold) <= max_relative_change
    return prediction.lower() == target.lower()


# --- VQA accuracy ----------------------------------------------------------

_NUMBERS = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
            "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
_ARTICLES = frozenset({"a", "an", "the"})
#: the VQA script's contraction table, as ``written=restored`` pairs. Its entries with a capital
#: letter (``Im``, ``Id've`` ...) are left out: the script looks words up after lowercasing them,
#: so they never match; so are its entries that map a word to itself (``let's``, ``she's``).
_CONTRACTIONS = dict(pair.split("=") for pair in """
aint=ain't arent=aren't cant=can't couldve=could've couldnt=couldn't couldn'tve=couldn't've
couldnt've=couldn't've didnt=didn't doesnt=doesn't dont=don't hadnt=hadn't hadnt've=hadn't've
hadn'tve=hadn't've hasnt=hasn't havent=haven't hed=he'd hed've=he'd've he'dve=he'd've hes=he's
howd=how'd howll=how'll hows=how's isnt=isn't itd=it'd itd've=it'd've it'dve=it'd've itll=it'll
maam=ma'am mightnt=mightn't mightnt've=mightn't've mightn'tve=mightn't've mightve=might've
mustnt=mustn't mustve=must've neednt=needn't notve=not've oclock=o'clock oughtnt=oughtn't
ow's'at='ow's'at 'ows'at='ow's'at 'ow'sat='ow's'at shant=shan't shed've=she'd've she'dve=she'd've
shouldve=should've shouldnt=shouldn't shouldnt've=shouldn't've shouldn'tve=shouldn't've
somebody'd=somebodyd somebodyd've=somebody'd've somebody'dve=somebody'd've somebodyll=somebody'll
somebodys=somebody's someoned=someone'd someoned've=someone'd've someone'dve=someone'd've
someonell=someone'll someones=someone's somethingd=something'd somethingd've=something'd've
something'dve=something'd've somethingll=something'll thats=that's thered=there'd
thered've=there'd've there'dve=there'd've therere=there're theres=there's theyd=they'd
theyd've=they'd've they'dve=they'd've theyll=they'll theyre=they're theyve=they've twas='twas
wasnt=wasn't wed've=we'd've we'dve=we'd've weve=we've werent=weren't whatll=what'll whatre=what're
whats=what's whatve=what've whens=when's whered=where'd wheres=where's whereve=where've whod=who'd
whod've=who'd've who'dve=who'd've wholl=who'll whos=who's whove=who've whyll=why'll whyre=why're
whys=why's wont=won't wouldve=would've wouldnt=wouldn't wouldnt've=wouldn't've
wouldn'tve=wouldn't've yall=y'all yall'll=y'all'll y'allll=y'all'll yall'd've=y'all'd've
y'alld've=y'all'd've y'all'dve=y'all'd've youd=you'd youd've=you'd've you'dve=you'd've
youll=you'll youre=you're youve=you've
""".split())
_PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`",
                ",", "?", "!")
_DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")
#: vqaEval.py's period rule: ``(?!<=\d)`` is a lookahead (not a lookbehind) that never fails
#: before a period, so a period is dropped wherever no digit follows it ("3." -> "3")
_PERIOD_VQA = re.compile(r"(?!<=\d)(\.)(?!\d)")
#: VLMEvalKit's (``vlmeval/smp/misc.py``): a real lookbehind, so "3." keeps its period
_PERIOD_VLMEVALKIT = re.compile(r"(?<!\d)\.(?!\d)")
#: the scripts pass ``re.UNICODE`` (32) where ``re.sub`` takes its count: at most 32 periods go
_PERIOD_COUNT = int(re.UNICODE)


def _punctuation(text: str, period: re.Pattern[str]) -> str:
    """vqaEval.py's ``processPunctuation``: each mark is removed where it touches a space (or
    anywhere, once the text holds digit,digit), else replaced by a space; then periods."""
    out = text
    strip_all = _DIGIT_COMMA_DIGIT.search(text) is not None
    for mark in _PUNCTUATION:
        out = out.replace(mark, "" if strip_all or mark + " " in text or " " + mark in text else " ")
    return period.sub("", out, count=_PERIOD_COUNT)


def vlmevalkit_punctuation(text: str) -> str:
    """VLMEvalKit's ``process_punctuation`` (``vlmeval/smp/misc.py``): vqaEval.py's marks, and its
    own period rule (a period after a digit kept; at most 32 periods dropped)."""
    return _punctuation(text, _PERIOD_VLMEVALKIT)


def _digits_articles(text: str) -> str:
    """vqaEval.py's ``processDigitArticle``: lowercase words, number words as digits, articles
    dropped, contractions restored."""
    words = [_NUMBERS.get(w, w) for w in text.lower().split()]
    return " ".join(_CONTRACTIONS.get(w, w) for w in words if w not in _ARTICLES)


Normalization = Literal["evalai", "vlmevalkit"]


def vqa_answer_form(text: str, normalization: Normalization = "evalai") -> str:
    """An answer as the VQA accuracy compares it.

    ``evalai``: the EvalAI answer processor of the TextVQA authors' code (MMF/Pythia
    ``EvalAIAnswerProcessor``, which lmms-eval copies): lowercased, "," and "?" removed, "'s"
    split off (" 's"), newlines and tabs made spaces, stripped, then vqaEval.py's punctuation and
    number/article/contraction steps. ``vlmevalkit``: VLMEvalKit's ``process_answer``: newlines
    and tabs made spaces, stripped, vqaEval.py's steps with VLMEvalKit's period rule (a period
    after a digit kept)."""
    if normalization == "evalai":
        text = text.lower().replace(",", "").replace("?", "").replace("'s", " 's").strip()
        text = text.replace("\n", " ").replace("\t", " ").strip()
        return _digits_articles(_punctuation(text, _PERIOD_VQA))
    text = text.replace("\n", " ").replace("\t", " ").strip()
    return _digits_articles(vlmevalkit_punctuation(text))


def vqa_accuracy(prediction: str, answers: Sequence[str], normalization: Normalization = "evalai") -> float:
    """The VQA accuracy of one reply (0-1): the reply and the n human answers normalised
    (:func:`vqa_answer_form`); for each answer left out in turn, min(1, how many of the other
    n - 1 equal the reply / 3); the mean over the n."""
    pred = vqa_answer_form(prediction, normalization)
    gts = [vqa_answer_form(a, normalization) for a in answers]
    same = sum(g == pred for g in gts)
    return sum(min(1.0, (same - (g == pred)) / 3) for g in gts) / len(gts)


# --- as metrics ------------------------------------------------------------


def _doc_id(doc: Mapping[str, Any]) -> str | None:
    return next((str(doc[k]) for k in ("id", "doc_id", "questionId", "question_id") if k in doc), None)


def _answers(target: Any, doc: Mapping[str, Any]) -> list[str]:
    """The references: one string or a non-empty list of strings (an empty string is an answer)."""
    refs = [target] if isinstance(target, str) else target
    if not isinstance(refs, (list, tuple)) or not refs or not all(isinstance(r, str) for r in refs):
        raise DataError(f"the target must be a string or a non-empty list of strings, got {str(target)[:120]!r}",
                        doc_id=_doc_id(doc), field="target")
    return list(refs)


class AnlsArgs(MetricArgs):
    threshold: float = 0.5
    """A question whose ANLS is below this scores 0 (the RRC scripts' default, 0.5)."""


@metrics.register("anls")
@takes_references("several")
@takes_args(AnlsArgs)
def anls_metric(parsed: Any, target: Any, doc: Mapping[str, Any], args: AnlsArgs | None = None) -> float:
    """ANLS against the references (0-100; see :func:`anls`). Read the reply with the ``raw``
    parser: the script divides by the reply's length as given."""
    answers = _answers(target, doc)
    if parsed is None:
        return 0.0
    return 100.0 * anls(str(parsed), answers, (args or AnlsArgs()).threshold)


class RelaxedArgs(MetricArgs):
    max_relative_change: float = 0.05
    """The tolerance on a numeric answer, relative to the reference (ChartQA: 5%)."""
    strip: bool = False
    """Strip the reply's surrounding whitespace first (VLMEvalKit's ``process_line`` does; the
    authors' rule and lmms-eval read the reply as given)."""


@metrics.register("relaxed_accuracy")
@takes_references("several")
@takes_args(RelaxedArgs)
def relaxed_accuracy(parsed: Any, target: Any, doc: Mapping[str, Any], args: RelaxedArgs | None = None) -> float:
    """100 when the reply matches a reference by :func:`relaxed_correct`, else 0 (several
    references: the best)."""
    args = args or RelaxedArgs()
    answers = _answers(target, doc)
    if parsed is None:
        return 0.0
    reply = str(parsed).strip() if args.strip else str(parsed)
    return 100.0 if any(relaxed_correct(reply, a, args.max_relative_change) for a in answers) else 0.0


class VqaAccuracyArgs(MetricArgs):
    normalization: Normalization = "evalai"
    """How replies and answers are normalised (:func:`vqa_answer_form`): ``evalai`` (the EvalAI
    processor of MMF, TextVQA's authors, and lmms-eval) or ``vlmevalkit``."""


@metrics.register("vqa_accuracy")
@takes_references("several")
@takes_args(VqaAccuracyArgs)
def vqa_accuracy_metric(parsed: Any, target: Any, doc: Mapping[str, Any], args: VqaAccuracyArgs | None = None) -> float:
    """The VQA accuracy against the human answers (0-100; see :func:`vqa_accuracy`)."""
    answers = _answers(target, doc)
    if parsed is None:
        return 0.0
    return 100.0 * vqa_accuracy(str(parsed), answers, (args or VqaAccuracyArgs()).normalization)
