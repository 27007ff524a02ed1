"""Stand-ins for the DR-Arena framework's ``core/examiner.py`` and ``core/agents.py`` (the tests' own text).

DR-X reads the framework's prompts from its source files when it runs (``analysis_lib.dr_arena.framework_prompts``);
those files are not stored in this project (no licence upstream) and the test machines cannot download them. These
stand-ins have the shape the extraction relies on — the classes, methods, f-string variables and interpolated
expressions of the framework's files at commit 175901c8 — with short prompts of our own, so the tests exercise
the extraction and the whole match exactly as DR-X runs on the real files.
"""

from __future__ import annotations

from analysis_lib.dr_arena import framework_prompts

EXAMINER_SOURCE = '''
import json


class ExaminerAgent:
    def __init__(self, model_config):
        self.model_config = model_config
        self.system_prompt = "STAND-IN examiner."

    def _call_llm(self, prompt, temp=0.7):
        return prompt

    def generate_question(self, context_struct, depth_level, width_count, past_questions=[], root_topic="General"):
        target_nodes = context_struct.get("aggregation_pool", [])
        constraint_str = "limit"
        reasoning_str = "chain"
        target_str = "targets"
        prompt = f"""
        STAND-IN TASK GENERATION
        Topic: "{root_topic}"
        Chain:
        {reasoning_str}
        Targets:
        {target_str}
        Use all {len(target_nodes)} targets.
        Reply {{"question": "...", "word_limit_instruction": "{constraint_str}", "checklist_width": [],
        "checklist_depth": [], "rationale": "..."}}
        """
        return self._call_llm(prompt)

    def judge_answers(self, task_data, traj_a, traj_b):
        q = task_data["question"]
        check_w = task_data.get("checklist_width", [])
        check_d = task_data.get("checklist_depth", [])
        max_limit = task_data.get("judge_max_limit", 300)
        c_a = 0
        c_b = 0
        prompt = f"""
        STAND-IN JUDGE
        Query: {q}
        Maximum {max_limit} words.
        [WIDTH]: {json.dumps(check_w)}
        [DEPTH]: {json.dumps(check_d)}
        === Agent A === (Citation Count: {c_a})
        {traj_a['final_answer']}
        === Agent B === (Citation Count: {c_b})
        {traj_b['final_answer']}
        Reply {{"verdict": "[[A_BETTER]]", "tie_quality": "N/A", "loser_failure_type": "NONE", "reasoning": "..."}}
        """
        return self._call_llm(prompt, temp=0.1)
'''

AGENTS_SOURCE = '''
class SearchAgent:
    def __init__(self, name, model_config):
        self.name = name
        self.system_prompt = "STAND-IN agent."

    def research(self, question, word_limit_instruction, history=None):
        history_str = ""
        prompt_text = f"""
        STAND-IN AGENT {history_str}
        Constraint: {word_limit_instruction}
        Current Question: {question}"""
        return prompt_text
'''


def prompts() -> framework_prompts.PromptSet:
    """The prompt set extracted from the stand-in sources."""
    return framework_prompts.parse_sources(EXAMINER_SOURCE, AGENTS_SOURCE, source="test stand-in")
