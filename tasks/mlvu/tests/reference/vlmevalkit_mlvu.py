# VLMEvalKit's MLVU multiple-choice prompt and answer check and its copy of the authors' judge-reply
# reading, verbatim: MLVU_MCQ.qa_template (vlmeval/dataset/mlvu.py), check_ans_with_model,
# extract_scores_summary and extract_scores_sub_scene (vlmeval/dataset/utils/mlvu.py) of
# github.com/open-compass/VLMEvalKit at commit e8e78f05f3080fe28154f2130321f17951c3be94. Apache
# License 2.0 (the repository's LICENSE). Both copy the MLVU authors' qa_template and check_ans
# (github.com/JUNJIE99/MLVU evaluation/multiple_choice_evaluation/choice_bench.py), and the
# extract_scores functions copy those of evaluation/generation_evaluation/calculate.py and
# calculate_sum.py; VLMEvalKit adds
# an LLM matcher for a reply the check fails. A test reference only. Ours: this header, the class
# line holding the method, and extract_answer_from_item, a stand-in for VLMEvalKit's matcher that
# the test sets (its default: no option read).


EXTRACTED = {"opt": None}


def extract_answer_from_item(model, item, dataset_name):
    return dict(EXTRACTED)


class MLVU_MCQ:
    def qa_template(self, data):
        question = f"Question: {data['question']}\n"
        question += 'Options:\n'
        answer = data['answer']
        answer_idx = -1
        for idx, c in enumerate(eval(data['candidates'])):
            question += f"({chr(ord('A') + idx)}) {c}\n"
            if c == answer:
                answer_idx = idx
        question = question.rstrip()
        answer = f"({chr(ord('A') + answer_idx)}) {answer}"
        return question, answer



def check_ans_with_model(pred, gt, model, item, dataset_name='MLVU_MCQ'):
    flag = False

    index = gt.index("(")  # noqa
    index2 = gt.index(")")  # noqa
    gt_option = gt[index + 1: index2]

    if ")" in pred:
        index3 = pred.index(")")
        pred = pred[index3 - 1: index3]
    if pred == gt_option:
        flag = True
    elif extract_answer_from_item(model, item, dataset_name)['opt'] == item['answer']:
        flag = True

    return flag


def extract_scores_summary(text):
    # Define the keys to locate in the text
    keys = ["score_completeness", "score_reliability"]
    scores = []

    for key in keys:
        # Find the index where each key starts
        start_index = text.find(key)
        if start_index == -1:
            continue  # Skip if key is not found

        # Find the start of the number which is after the colon and space
        start_number_index = text.find(":", start_index) + 2
        end_number_index = text.find(",", start_number_index)  # Assuming the number ends before a comma

        # Extract and convert the number to float
        score = float(text[start_number_index:end_number_index])
        scores.append(score)

    return scores


def extract_scores_sub_scene(text):
    # Define the keys to locate in the text
    keys = ["score_accuracy", "score_relevance"]
    scores = []

    for key in keys:
        # Find the index where each key starts
        start_index = text.find(key)
        if start_index == -1:
            continue  # Skip if key is not found

        # Find the start of the number which is after the colon and space
        start_number_index = text.find(":", start_index) + 2
        end_number_index = text.find(",", start_number_index)  # Assuming the number ends before a comma

        # Extract and convert the number to float
        score = float(text[start_number_index:end_number_index])
        scores.append(score)

    return scores
