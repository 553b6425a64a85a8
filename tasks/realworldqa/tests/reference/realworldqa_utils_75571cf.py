# lmms-eval's RealWorldQA scoring: realworldqa_process_results of lmms_eval/tasks/realworldqa/utils.py of
# github.com/EvolvingLMMs-Lab/lmms-eval at commit 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3 (MIT License),
# verbatim below except one line, ours: the function-local import of extract_mcq_answer reads the
# verbatim copy in the shared tests/reference/ of the repository. A test reference only (run by tests, never by mmtasks).
import importlib.util as _util  # ours
from pathlib import Path as _Path  # ours
_spec = _util.spec_from_file_location("reference_mcq_extract_75571cf", _Path(__file__).parents[4] / "tests" / "reference" / "lmms_eval_mcq_extract_75571cf.py")  # ours
_mcq = _util.module_from_spec(_spec); _spec.loader.exec_module(_mcq)  # ours


def realworldqa_process_results(doc, results):
    extract_mcq_answer = _mcq.extract_mcq_answer  # ours

    pred = results[0]
    gt_ans = doc["answer"].strip()

    # For MCQ questions (A/B/C/D answers), use the shared extractor
    if gt_ans.upper() in ("A", "B", "C", "D"):
        pred_ans = extract_mcq_answer(pred, choices=["A", "B", "C", "D"])
        score = 1.0 if pred_ans == gt_ans.upper() else 0.0
    else:
        # Open-ended answers (e.g., numeric "0", text "Downhill")
        pred_clean = pred.lower().strip().rstrip(".")
        score = 1.0 if pred_clean == gt_ans.lower() else 0.0

    return {
        "exact_match": score,
    }


