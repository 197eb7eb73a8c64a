"""Every bad-input path: a clear message naming the problem, exit status 1 (2 for usage),
and no output file left behind."""

import json
import os
import tempfile
import unittest

import h5py

from support import run_cli, run_main
from fakes import FakeTokenizer
from mdsd_runner import hf
from mdsd_runner.errors import RunnerError
from mdsd_runner.prompts import load_prompts


class BadInputs(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.corpus = self.file("corpus.txt", "the lord said unto moses .\nand moses said .\n"
                                "the people went unto the mountain .\n")
        self.prompts = self.file("p.jsonl", '{"prompt": "the lord"}\n{"prompt": "and moses"}\n')
        self.out = os.path.join(d, "out.h5")

    def tearDown(self):
        self.tmp.cleanup()

    def file(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def ngram(self, *args, prompts=None, out=None, corpus=None):
        return run_main("ngram", "--corpus", corpus or self.corpus, "--prompts",
                       prompts or self.prompts, "-o", out or self.out, "--vocab-size", "20",
                       "-q", *args)

    def expect(self, result, status, *phrases):
        rc, out, err = result
        self.assertEqual(rc, status, out + err)
        for phrase in phrases:
            self.assertIn(phrase, err)
        self.assertFalse(os.path.exists(self.out))

    def test_the_good_case_works(self):
        rc, out, err = self.ngram()
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.exists(self.out))

    def test_prompt_files(self):
        missing = os.path.join(self.tmp.name, "nope.jsonl")
        self.expect(self.ngram(prompts=missing), 1, f"prompt file {missing} does not exist")
        empty = self.file("empty.jsonl", "\n  \n")
        self.expect(self.ngram(prompts=empty), 1, f"prompt file {empty} has no prompts")
        bad = self.file("bad.jsonl", '{"prompt": "a"}\n\n{"prompt": "b"\n')
        self.expect(self.ngram(prompts=bad), 1, f"{bad} line 3: malformed JSON")
        cases = {'[1, 2]': "expected a JSON object",
                 '{"text": "a"}': 'exactly one of "prompt" and "messages"',
                 '{"prompt": "a", "messages": []}': 'exactly one of',
                 '{"prompt": 5}': '"prompt" must be a non-empty string',
                 '{"messages": [{"role": "user"}]}': "message 0 must be an object",
                 '{"messages": [{"role": "user", "content": "hi"}]}':
                     "the ngram backend takes {\"prompt\": TEXT} records"}
        for line, phrase in cases.items():
            path = self.file("case.jsonl", '{"prompt": "ok"}\n' + line + "\n")
            with self.subTest(line=line):
                self.expect(self.ngram(prompts=path), 1, f"{path} line 2", phrase)

    def test_prompts_loader_keeps_line_numbers(self):
        path = self.file("ok.jsonl", '\n{"prompt": "a"}\n\n{"messages": [{"role": "user", '
                                     '"content": "b"}]}\n')
        prompts = load_prompts(path)
        self.assertEqual([p.where for p in prompts], [f"{path} line 2", f"{path} line 4"])

    def test_unwritable_outputs(self):
        nowhere = os.path.join(self.tmp.name, "no-such-folder", "out.h5")
        # libmdsd's output check (mdsd/output.h), before any work, in mdsd's words
        self.expect(self.ngram(out=nowhere), 1, "cannot create output", "does not exist")
        not_a_folder = os.path.join(self.corpus, "out.h5")
        self.expect(self.ngram(out=not_a_folder), 1, "cannot create output", self.corpus)
        folder = os.path.join(self.tmp.name, "a-folder")
        os.mkdir(folder)
        self.expect(self.ngram(out=folder), 1, "is a directory; give a file name")

    def test_damaged_or_foreign_partial_files(self):
        partial = self.file("out.h5.partial", "not HDF5 at all")
        self.expect(self.ngram(), 1, f"cannot resume from {partial}", "delete it")
        os.unlink(partial)
        rc, _, err = self.ngram("--num-samples", "3", "--stop-after", "1")
        self.assertEqual(rc, 0, err)
        self.expect(self.ngram("--num-samples", "3", "--seed", "9"), 1,
                    "was started with other options")
        with h5py.File(self.out + ".partial", "r+") as f:
            del f.attrs["runner_rows_done"]
        self.expect(self.ngram("--num-samples", "3"), 1, "is damaged", "delete it")

    def test_corpus_and_model_options(self):
        self.expect(self.ngram(corpus=os.path.join(self.tmp.name, "none.txt")), 1,
                    "corpus file", "does not exist")
        self.expect(self.ngram(corpus=self.file("blank.txt", "\n\n")), 1, "is empty")
        self.expect(self.ngram("--order", "3"), 1, "--order must be at least 4")
        self.expect(self.ngram("--draft-order", "4"), 1, "--draft-order 4 must be between 1 and")
        self.expect(self.ngram("--draft-order", "2", "--draft-order", "2"), 1, "must differ")
        self.expect(self.ngram("--vocab-size", "3"), 1, "--vocab-size must be at least 4")
        self.expect(self.ngram("--num-samples", "0"), 1, "--num-samples must be at least 1")
        self.expect(self.ngram("--max-new-tokens", "0"), 1, "--max-new-tokens must be")
        self.expect(self.ngram("--gen-temperature", "-1"), 1, "--gen-temperature must be >= 0")
        self.expect(self.ngram("--stop-after", "0"), 1, "--stop-after must be at least 1")
        self.expect(self.ngram("--seed", "-2"), 1, "--seed must be >= 0")
        self.expect(self.ngram("--batch-size", "0"), 1, "--batch-size must be at least 1")
        self.expect(self.ngram("--logits-dtype", "int8"), 2, "invalid choice")
        self.expect(run_cli("ngram", "--prompts", self.prompts), 2, "required")
        self.expect(run_cli("ngram", "--corpus", self.corpus, "--prompts", self.prompts, "-o",
                            self.out, "--order", "2"), 1, "mdsd-runner: error: --order")

    def test_mismatched_tokenizers_are_refused(self):
        a = FakeTokenizer(10)
        hf.check_same_vocab("target", a, "draft", FakeTokenizer(10))
        with self.assertRaisesRegex(RunnerError, "target has 10 tokens, draft has 11"):
            hf.check_same_vocab("target", a, "draft", FakeTokenizer(11))
        b = FakeTokenizer(10)
        b.tokens = lambda: [f"t{i}" for i in range(6)] + ["other"] + [f"t{i}" for i in range(7, 10)]
        with self.assertRaisesRegex(RunnerError, "token id 6 is 't6' in target but 'other' in draft"):
            hf.check_same_vocab("target", a, "draft", b)

    def test_hf_backend_names_what_is_missing(self):
        have_stack = True
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError:
            have_stack = False
        missing = os.path.join(self.tmp.name, "no-model")
        result = run_main("hf", "--target", missing, "--draft", missing, "--device", "cpu",
                         "--prompts", self.prompts, "-o", self.out)
        if have_stack:
            self.expect(result, 1, f"cannot load the tokenizer of {missing}")
        else:
            self.expect(result, 1, "the hf backend needs PyTorch and transformers")

    def test_hf_helpers(self):
        self.assertEqual(hf.draft_names(["/m/tiny-draft/", "other/tiny-draft", "a b"]),
                         ["tiny-draft", "tiny-draft-2", "a_b"])

        class Tok:
            eos_token_id = 5

        class Gen:
            eos_token_id = [7, 8]

        self.assertEqual(hf.eos_ids_of(Tok(), Gen()), {5, 7, 8})
        self.assertEqual(hf.eos_ids_of(Tok(), None), {5})

    def test_validate_reports_problems(self):
        rc, out, err = run_cli("validate", self.corpus)
        self.assertEqual(rc, 1)
        self.assertIn("is not an HDF5 file", err)  # libmdsd's message


class ChatPrompts(unittest.TestCase):
    """The hf tokenizer adapter with a stand-in transformers tokenizer."""

    class Tok:
        chat_template = "{{ messages }}"
        pad_token_id = None

        def __len__(self):
            return 50

        def __call__(self, text):
            return {"input_ids": [1] + [10 + len(w) for w in text.split()]}

        def apply_chat_template(self, messages, add_generation_prompt, tokenize):
            assert add_generation_prompt and tokenize
            return [1, 2] + [20 + len(m["content"]) for m in messages] + [3]

    def test_plain_chat_and_wrapped_prompts(self):
        t = hf.HFTokenizer(self.Tok(), "tok", {4})
        self.assertEqual(t.pad_id, 4)
        self.assertEqual(t.encode({"prompt": "ab cde"}, "x"), [1, 12, 13])
        msgs = {"messages": [{"role": "user", "content": "hello"}]}
        self.assertEqual(t.encode(msgs, "x"), [1, 2, 25, 3])
        wrapped = hf.HFTokenizer(self.Tok(), "tok", {4}, chat=True)
        self.assertEqual(wrapped.encode({"prompt": "hey"}, "x"), [1, 2, 23, 3])
        no_template = self.Tok()
        no_template.chat_template = None
        with self.assertRaisesRegex(RunnerError, "f line 3: a chat prompt, but"):
            hf.HFTokenizer(no_template, "tok", {4}).encode(msgs, "f line 3")


if __name__ == "__main__":
    unittest.main()
