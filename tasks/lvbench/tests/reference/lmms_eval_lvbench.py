# lmms-eval's LVBench prompt and scoring, verbatim: lvbench_doc_to_text, extract_characters_regex
# and lvbench_process_results of lmms_eval/tasks/lvbench/utils.py,
# github.com/EvolvingLMMs-Lab/lmms-eval at commit 75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3 (the
# folder last changed in 4be7ee0e), with the post_prompt of its lvbench.yaml. MIT License,
# Copyright (c) 2025 LMMs-Lab (the repository's LICENSE). A test reference only. Ours: this header
# and LMMS_EVAL_SPECIFIC_KWARGS, the yaml's lmms_eval_specific_kwargs.default as the test passes it;
# extract_characters_regex imports lmms-eval's mcq_extract, which the test provides
# (lmms_eval_mcq_extract.py, bundled).

LMMS_EVAL_SPECIFIC_KWARGS = {"pre_prompt": "", "post_prompt": "\nAnswer the question with the option letter"}


def lvbench_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    if lmms_eval_specific_kwargs is None:
        lmms_eval_specific_kwargs = {}
    if "pre_prompt" not in lmms_eval_specific_kwargs:
        lmms_eval_specific_kwargs["pre_prompt"] = ""
    if "post_prompt" not in lmms_eval_specific_kwargs:
        lmms_eval_specific_kwargs["post_prompt"] = "\nAnswer the question with the option letter."

    question = doc["question"]
    options = doc.get("options", [])
    if options:
        option_letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        option_text = "\n".join(f"({option_letters[i]}) {opt}" for i, opt in enumerate(options))
        question = question + "\n" + option_text

    return lmms_eval_specific_kwargs["pre_prompt"] + question + lmms_eval_specific_kwargs["post_prompt"]


def extract_characters_regex(s):
    from lmms_eval.tasks._task_utils.mcq_extract import extract_mcq_answer

    return extract_mcq_answer(s, choices=["A", "B", "C", "D"])


def lvbench_process_results(doc, results):
    """
    Args:
        doc: a instance of the eval dataset
        results: [pred]
    Returns:
        a dictionary with key: metric name (in this case videomme score), value: metric value
    """
    pred = results[0]
    pred_ans = extract_characters_regex(pred)
    # gt_ans = doc["answer"].lower().strip().replace(".", "")
    gt_ans = doc["answer"]
    score = pred_ans == gt_ans

    # return {f"videomme_perception_score": data_dict for metric in matrices}
    return {"lvbench_score": score}
