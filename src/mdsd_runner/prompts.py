"""Prompt sets: JSONL files with one object per line, either {"prompt": TEXT} (plain
text to continue) or {"messages": [{"role": ROLE, "content": TEXT}, ...]} (a chat for the
tokenizer's chat template). Blank lines are skipped; other keys are ignored."""

import json
import os

from .errors import RunnerError


class Prompt:
    """One prompt record and where it came from ("FILE line N"), for error messages."""

    def __init__(self, record, where):
        self.record = record
        self.where = where


def _check(record, where):
    if not isinstance(record, dict):
        raise RunnerError(f"{where}: expected a JSON object, got {type(record).__name__}")
    has_prompt, has_messages = "prompt" in record, "messages" in record
    if has_prompt == has_messages:
        raise RunnerError(f"{where}: needs exactly one of \"prompt\" and \"messages\"")
    if has_prompt:
        if not isinstance(record["prompt"], str) or not record["prompt"].strip():
            raise RunnerError(f"{where}: \"prompt\" must be a non-empty string")
        return
    messages = record["messages"]
    if not isinstance(messages, list) or not messages:
        raise RunnerError(f"{where}: \"messages\" must be a non-empty list")
    for i, m in enumerate(messages):
        if (not isinstance(m, dict) or not isinstance(m.get("role"), str)
                or not isinstance(m.get("content"), str)):
            raise RunnerError(f"{where}: message {i} must be an object with string "
                              "\"role\" and \"content\"")


def load_prompts(path):
    """The prompts of a JSONL file, in file order."""
    if not os.path.exists(path):
        raise RunnerError(f"prompt file {path} does not exist")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except (OSError, UnicodeDecodeError) as e:
        raise RunnerError(f"cannot read prompt file {path}: {e}") from None
    prompts = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise RunnerError(f"{where}: malformed JSON ({e.msg} at column {e.colno})") from None
        except RecursionError:
            raise RunnerError(f"{where}: malformed JSON (nested too deeply)") from None
        _check(record, where)
        prompts.append(Prompt(record, where))
    if not prompts:
        raise RunnerError(f"prompt file {path} has no prompts")
    return prompts
