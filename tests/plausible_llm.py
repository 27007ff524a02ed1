"""A plausible loopback model for whole-chapter runs: a responder for :class:`fake_openai_server.FakeOpenAIServer`
that recognises every task the library sends and answers it well-formed, deterministically and plausibly.

Each reply is drawn from a generator seeded by a hash of the request's messages (the same prompt always gets the
same reply), and follows the prompt's content where that is cheap, so the numbers a chapter computes from it are not
pure noise: intents by the query's first words, a property holds when its words occur in the text, nuggets are
the first words of the documents and are supported when their words occur in the passage, the LLM judge prefers
the answer with more words of the query, the rubric scores longer, more structured answers higher.

Tasks recognised (the prompt templates in ``analysis_lib/resources/prompts/`` and the nuggetizer prompts):
intents (SA-B5), describing differences (SA-C1/C2: propose, reduce, rank), topic names (SA-B4), nuggetization,
importance and assignment (NG), the LLM judge (NG-F6), the rubric (NG-T3), query classes (NG-Q), the DR-Arena
examiner's questions, agents' answers and verdicts (DR-X) and answer-engine judging (AE: statements, support,
confidence, stance). Anything else gets a reply built from the request's JSON schema, or "ok".

:class:`PlausibleServer` is the fake server with this responder, embeddings of any dimension (word-hashing
vectors, so texts sharing words lie close), an option to answer ``404 model_not_found`` on ``/v1/embeddings`` (a
chat-only server) and an optional seeded fault mix (HTTP 429, HTTP 500, a body cut in half). Run as a script it
serves until interrupted: ``python tests/plausible_llm.py [--no-embeddings] [--faults]`` (it prints its base URL).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import random
import re
import signal
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_openai_server import FakeOpenAIServer  # noqa: E402

INTENTS = ("Text Processing", "Creative Generation", "Factual Lookup", "Info Synthesis", "Analysis",
           "Recommendation", "Explanation", "Guidance", "Other")
_INTENT_CUES = (
    (("who", "when", "where", "what is", "what was", "which", "how many", "how much"), "Factual Lookup"),
    (("why", "explain", "what does", "meaning"), "Explanation"),
    (("how to", "how do", "how can", "steps", "guide"), "Guidance"),
    (("best", "recommend", "suggest", "should i", "top "), "Recommendation"),
    (("write", "poem", "story", "create", "generate"), "Creative Generation"),
    (("compare", "analy", "pros and cons", "evaluate", "versus", " vs"), "Analysis"),
    (("summar", "overview", "latest", "news", "research"), "Info Synthesis"),
    (("translate", "rewrite", "correct", "paraphrase", "format"), "Text Processing"),
)
_PROPERTIES = (
    "User asks for recent news or current events", "User asks for a comparison between products or options",
    "User requests step-by-step instructions", "User writes in a language other than English",
    "User asks about a named person or organisation", "User includes a code snippet or technical term",
    "User asks for a recommendation", "User asks a short factual question",
)
_RESPONSE_PROPERTIES = (
    "Cites sources with numbered references", "Uses bulleted or numbered lists", "Mentions specific dates",
    "Gives a longer, more detailed answer", "Includes hyperlinks to web pages", "Uses section headings",
    "Ends with a follow-up question", "Quotes figures and statistics",
)
_STOP = frozenset("the a an of to in and or for on is are was were be with by at as it this that what how why "
                  "who which do does can i you my your me from about".split())
_ATTRIBUTES = ("ambiguous", "incompleteness", "assumptive", "multi-faceted", "knowledge-intensive", "subjective",
               "reasoning-intensive", "harmful")
_RUBRIC = ("Criterion 1: Fluency and Coherence", "Criterion 2: Grammar and Syntax",
           "Criterion 3: Readability and Presentation")


def _text(payload: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in payload.get("messages", []))


def _rng(payload: dict[str, Any]) -> random.Random:
    digest = hashlib.sha256((str(payload.get("model")) + "\0" + _text(payload)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP and len(w) > 2}


def _between(text: str, start: str, end: str) -> str:
    m = re.search(re.escape(start) + r"\s*(.*?)\s*" + re.escape(end), text, flags=re.S)
    return m.group(1) if m else ""


def _list_after(text: str, label: str) -> list[str]:
    m = re.search(re.escape(label) + r": (\[.*?\])\n", text, flags=re.S)
    if not m:
        return []
    try:
        value = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


# --------------------------------------------------------------------------------------------------- the tasks
def intents(text: str, rng: random.Random) -> str:
    query = text.rsplit("User query:", 1)[1].strip().lower()
    found = [label for cues, label in _INTENT_CUES if any(c in query for c in cues)]
    primary = found[0] if found else rng.choice(INTENTS[:8])
    secondary = found[1] if len(found) > 1 else ("Unassigned" if rng.random() < 0.6 else rng.choice(INTENTS[:8]))
    if secondary == primary:
        secondary = "Unassigned"
    return json.dumps({"primary_intent": primary, "secondary_intent": secondary,
                       "reasoning": f"The user mainly wants {primary.lower()}."})


def propose(text: str, rng: random.Random, responses: bool) -> str:
    pool = _RESPONSE_PROPERTIES if responses else _PROPERTIES
    return "\n".join(f'* "{p}"' for p in rng.sample(pool, 3))


def reduce_properties(text: str, rng: random.Random) -> str:
    listing = text.split("#####")[1] if text.count("#####") >= 2 else text
    props: list[str] = []
    for line in listing.splitlines():
        p = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip().strip('"')
        if len(p) >= 3 and p not in props:
            props.append(p)
    return "\n".join(f"{i + 1}. {p}" for i, p in enumerate(props[:5] or ["User asks a short factual question"]))


def rank(text: str, rng: random.Random) -> str:
    body = _between(text, "<START>", "<END>")
    if "ANSWER:" in text:
        body = text.split("ANSWER:", 1)[1].split("PROPERTY:", 1)[0]
    prop = text.rsplit("PROPERTY:", 1)[1]
    cue = _words(prop) - {"user", "asks", "uses", "gives", "includes", "writes", "more", "other"}
    hit = len(cue & _words(body)) / max(1, len(cue))
    return "Yes" if rng.random() < 0.1 + 0.8 * min(1.0, 2 * hit) else "No"


def topic_label(text: str, rng: random.Random) -> str:
    keywords = [k.strip() for k in text.split("KEYWORDS:", 1)[1].split("\n", 1)[0].split(",") if k.strip()]
    label = " ".join(k.title() for k in keywords[:3]) or "General Questions"
    return json.dumps({"label": label})


def nugget_create(text: str, rng: random.Random) -> str:
    current = _list_after(text, "Initial Nugget List")
    cap = int(m.group(1)) if (m := re.search(r"at most (\d+) nuggets", text)) else 30
    context = _between(text, "Context:", "Search Query:")
    for doc in re.findall(r"^\[\d+\] (.*)$", context, flags=re.M):
        for sentence in re.split(r"(?<=[.!?])\s+", doc)[:2]:
            words = sentence.replace('"', "").replace("'", "").split()[:10]
            if len(words) >= 2:
                nugget = " ".join(words).rstrip(".,;:")
                if nugget not in current:
                    current.append(nugget)
    if not current:
        current = ["No relevant information found"]
    return repr(current[:cap])


def nugget_score(text: str, rng: random.Random) -> str:
    nuggets = _list_after(text, "Nugget List")
    return repr(["vital" if i < max(1, len(nuggets) // 3) or rng.random() < 0.2 else "okay"
                 for i in range(len(nuggets))])


def nugget_assign(text: str, rng: random.Random) -> str:
    nuggets = _list_after(text, "Nugget List")
    passage = _words(_between(text, "Passage:", "Nugget List:"))
    labels = []
    for n in nuggets:
        words = _words(n)
        share = len(words & passage) / max(1, len(words))
        labels.append("support" if share >= 0.7 else "partial_support" if share >= 0.35 else "not_support")
    return json.dumps(labels)


def ng_judge(text: str, rng: random.Random) -> str:
    query = _words(_between(text, "[The Start of User's Question]", "[The End of User's Question]"))
    a = _between(text, "[The Start of Assistant A's Answer]", "[The End of Assistant A's Answer]")
    b = _between(text, "[The Start of Assistant B's Answer]", "[The End of Assistant B's Answer]")
    score = (len(query & _words(a)) - len(query & _words(b))) + 0.002 * (len(a) - len(b)) + rng.gauss(0, 1)
    verdict = "A" if score > 0.6 else "B" if score < -0.6 else "Tie"
    return f"Both answers address the question; they differ in coverage.\n\nFinal verdict: [[{verdict}]]"


def rubric(text: str, rng: random.Random) -> str:
    response = text.split("Candidate response to evaluate:", 1)[1].split("Criterion 1:", 1)[0]
    base = 2 + min(2, len(response.split()) // 80) + (1 if re.search(r"^\s*[-*\d]", response, re.M) else 0)
    out = {}
    for key in _RUBRIC:
        score = max(1, min(5, base + rng.choice((-1, 0, 0, 1))))
        out[key] = {"feedback": "Readable and mostly well organised.", "score": score}
    return json.dumps(out)


def query_classes(text: str, rng: random.Random) -> str:
    question = text.split("Given the question:", 1)[1].split("\nInstructions:", 1)[0].lower()
    scores = {a: rng.randint(0, 6) for a in _ATTRIBUTES}
    if len(question.split()) < 5:
        scores["incompleteness"] = rng.randint(5, 9)
    if any(w in question for w in ("best", "should", "better", "opinion")):
        scores["subjective"] = rng.randint(6, 10)
    if any(w in question for w in ("why", "how", "explain", "compare")):
        scores["reasoning-intensive"] = rng.randint(6, 10)
    scores["harmful"] = min(scores["harmful"], 2)
    return "```python\n" + repr(scores) + "\n```"


def dr_question(text: str, rng: random.Random) -> str:
    topic = m.group(1) if (m := re.search(r'Topic: "?([^"\n]+)', text)) else "the topic"
    return json.dumps({"question": f"What are the main facts about {topic.strip()} and how are they connected?",
                       "word_limit_instruction": "about 200 words",
                       "checklist_width": [f"covers aspect {i + 1}" for i in range(rng.randint(2, 4))],
                       "checklist_depth": ["explains the chain of reasoning"], "rationale": "covers the tree"})


def dr_judge(text: str, rng: random.Random) -> str:
    verdict = rng.choice(("A_MUCH_BETTER", "A_BETTER", "TIE", "B_BETTER", "B_MUCH_BETTER", "A_BETTER", "B_BETTER"))
    return json.dumps({"verdict": f"[[{verdict}]]", "tie_quality": rng.choice(("HIGH", "LOW")),
                       "loser_failure_type": rng.choice(("DEEP", "WIDE", "BOTH", "NONE")),
                       "reasoning": "One answer covers more of the checklist."})


def ae_statements(text: str, rng: random.Random) -> str:
    answer = text.split("```")[1].strip() if text.count("```") >= 2 else ""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", answer) if s.strip()]
    return json.dumps({"sentences": [
        {"sentence": s, "core": "0" if re.match(r"(Great|Sure|Here|Let me|I hope)", s) else "1"}
        for s in sentences]})


def ae_support(text: str, rng: random.Random) -> str:
    document = _words(text.split("```")[1]) if text.count("```") >= 2 else set()
    statement = _words(re.sub(r"\[[\d,\s]+\]", "", text.split("Statement:", 1)[1].split("Reply with JSON", 1)[0]))
    share = len(statement & document) / max(1, len(statement))
    return json.dumps({"support": "full" if share >= 0.6 else "partial" if share >= 0.3 else "none"})


def ae_confidence(text: str, rng: random.Random) -> str:
    answer = text.split("```")[1].lower() if text.count("```") >= 2 else ""
    hedges = sum(answer.count(w) for w in ("may", "might", "could", "unclear", "some suggest", "possibly"))
    level = 3 if hedges == 0 else 2 if hedges < 3 else 1
    level = max(0, min(4, level + rng.choice((0, 0, 1, -1))))
    names = ("Strongly Not Confident", "Not Confident", "Neutral", "Confident", "Strongly Confident")
    return json.dumps({"confidence": names[level]})


def ae_stance(text: str, rng: random.Random) -> str:
    numbers = [int(k) for k in re.findall(r"^\[(\d+)\]", text.split("Statements:", 1)[1], flags=re.M)]
    lists: dict[str, list[int]] = {"agree_statements": [], "disagree_statements": [], "neutral_statements": []}
    for k in numbers:
        lists[rng.choices(list(lists), weights=(5, 2, 3))[0]].append(k)
    return json.dumps(lists)


def from_schema(schema: dict[str, Any], rng: random.Random) -> Any:
    """A value satisfying a small JSON schema (enums, objects, arrays, strings, numbers, booleans)."""
    if "enum" in schema:
        return rng.choice([v for v in schema["enum"] if v is not None] or [None])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {k: from_schema(v, rng) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [from_schema(schema.get("items", {}), rng) for _ in range(max(1, schema.get("minItems", 1)))]
    if kind == "integer":
        return rng.randint(schema.get("minimum", 0), schema.get("maximum", 10))
    if kind == "number":
        return rng.uniform(schema.get("minimum", 0.0), schema.get("maximum", 1.0))
    if kind == "boolean":
        return rng.random() < 0.5
    return "plausible text"


def respond(payload: dict[str, Any]) -> str:
    """The reply to one chat-completions request (see the module doc for the tasks)."""
    text, rng = _text(payload), _rng(payload)
    if "User query:" in text and "Allowed intent categories" in text:
        return intents(text, rng)
    if text.startswith("The following are a two separate lists"):
        return propose(text, rng, responses=False)
    if text.startswith("The following is a list of Model A and Model B outputs"):
        return propose(text, rng, responses=True)
    if "PROPERTIES:" in text and "#####" in text:
        return reduce_properties(text, rng)
    if "PROPERTY:" in text and "Respond with Yes or No" in text:
        return rank(text, rng)
    if "KEYWORDS:" in text and "topic name" in text:
        return topic_label(text, rng)
    if text.startswith("You are NuggetizeLLM"):
        return nugget_create(text, rng)
    if text.startswith("You are NuggetizeScoreLLM"):
        return nugget_score(text, rng)
    if text.startswith("You are NuggetizeAssignerLLM"):
        return nugget_assign(text, rng)
    if "[The Start of Assistant A's Answer]" in text:
        return ng_judge(text, rng)
    if "Candidate response to evaluate:" in text:
        return rubric(text, rng)
    if "Given the question:" in text and "python dictionary" in text:
        return query_classes(text, rng)
    if "checklist_width" in text and '"question"' in text and "Agent A" not in text:
        return dr_question(text, rng)
    if ("Agent A" in text and "Agent B" in text) and ("verdict" in text.lower() or "JUDGE" in text):
        return dr_judge(text, rng)
    if "Split the answer into its statements" in text:
        return ae_statements(text, rng)
    if "factually supports the statement" in text:
        return ae_support(text, rng)
    if "Rate how confident the language" in text:
        return ae_confidence(text, rng)
    if "agree_statements" in text and "Statements:" in text:
        return ae_stance(text, rng)
    fmt = payload.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    if isinstance(schema, dict):
        return json.dumps(from_schema(schema, rng))
    # an agent's answer (DR-X) or any free-text task
    words = sorted(_words(text))[:40]
    return "Answer: " + " ".join(words) + ". Sources: [1] https://example.org/" + hashlib.sha1(
        text.encode()).hexdigest()[:8]


# --------------------------------------------------------------------------------------------------- the server
class PlausibleServer(FakeOpenAIServer):
    """The fake server answering with :func:`respond`.

    ``embeddings``: serve ``/v1/embeddings`` (vectors of ``embedding_dim`` values: the words of a text hashed
    into the dimensions, plus a little hash noise, unit length) or answer ``404 model_not_found`` (a chat-only
    server). ``faults``: probabilities of HTTP 429, HTTP 500 and a 200 body cut in half, drawn per request from a
    generator seeded with ``fault_seed`` (deterministic for a given request order)."""

    def __init__(self, *, embeddings: bool = True, embedding_dim: int = 3072,
                 faults: tuple[float, float, float] = (0.0, 0.0, 0.0), fault_seed: int = 0):
        super().__init__(respond, embedding_dim=embedding_dim)
        self.embeddings_enabled = embeddings
        self.faults = faults
        self.fault_rng = random.Random(fault_seed)
        self.injected = {"429": 0, "500": 0, "cut": 0}
        self.embedding_calls = 0
        self._fault_lock = threading.Lock()

    def _embeddings(self, payload: dict[str, Any]) -> bytes:
        inputs = payload.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else inputs
        dim = self.embedding_dim
        data = []
        for i, text in enumerate(inputs):
            vec = [0.0] * dim
            for w in re.findall(r"\w+", str(text).lower()):
                h = int.from_bytes(hashlib.blake2b(w.encode(), digest_size=8).digest(), "big")
                vec[h % dim] += 1.0 if (h >> 40) & 1 else -1.0
            noise = random.Random(hashlib.sha256(str(text).encode()).digest())
            vec = [v + 0.05 * noise.gauss(0, 1) for v in vec]
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            data.append({"object": "embedding", "index": i, "embedding": [round(v / norm, 6) for v in vec]})
        return json.dumps({"object": "list", "data": data, "model": payload.get("model"),
                           "usage": {"prompt_tokens": sum(len(str(t).split()) for t in inputs)}}).encode()

    def _answer(self, h: Any, payload: dict[str, Any], action: tuple[Any, ...] | None) -> None:
        if h.path.endswith("/embeddings"):
            with self.lock:
                self.embedding_calls += 1
            if not self.embeddings_enabled:
                body = json.dumps({"error": {"message": f"The model `{payload.get('model')}` does not exist",
                                             "type": "invalid_request_error", "code": "model_not_found"}}).encode()
                self._send(h, 404, body)
                return
        elif action is None and any(self.faults):
            with self._fault_lock:
                x = self.fault_rng.random()
            p429, p500, pcut = self.faults
            if x < p429:
                action, key = ("status", 429), "429"
            elif x < p429 + p500:
                action, key = ("status", 500), "500"
            elif x < p429 + p500 + pcut:
                action, key = ("truncated_body",), "cut"
            else:
                key = ""
            if key:
                with self.lock:
                    self.injected[key] += 1
        super()._answer(h, payload, action)


def main(argv: list[str] | None = None) -> None:
    """Serve until SIGINT or SIGTERM on a free port of 127.0.0.1; the first line printed is the base URL, the last
    the counts (chat requests, embedding calls, injected faults)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--no-embeddings", action="store_true", help="answer 404 model_not_found on embeddings")
    parser.add_argument("--dim", type=int, default=3072)
    parser.add_argument("--faults", action="store_true", help="2%% HTTP 429, 1%% HTTP 500, 1%% cut-off bodies")
    args = parser.parse_args(argv)
    srv = PlausibleServer(embeddings=not args.no_embeddings, embedding_dim=args.dim,
                          faults=(0.02, 0.01, 0.01) if args.faults else (0.0, 0.0, 0.0))
    print(srv.start(), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        chats = len(srv.chat_requests())
        print(f"chat requests {chats}, embedding calls {srv.embedding_calls}, injected {srv.injected}", flush=True)
        srv.stop()


if __name__ == "__main__":
    main()
