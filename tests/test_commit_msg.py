#!/usr/bin/env python3
"""scripts/hooks/commit-msg takes messages in lode's form and refuses the
others; scripts/check-commits.sh finds a refused one in a history and passes
a clone that lacks the commit it starts from."""
import os
import subprocess
import tempfile
import unittest

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts")
HOOK = os.path.join(SCRIPTS, "hooks", "commit-msg")
CHECK = os.path.join(SCRIPTS, "check-commits.sh")

GOOD = [
    "stratum: the failover loop in a file of its own",
    "stratum: the failover loop in a file of its own\n\nWhy, in a body.\n",
    "docs: GIMPS.md says what the client does with 31",
    "backend_support: Momentum batches of candidates, one way",
    "scripts/run.sh, ci: one preset for both",
    "tf: " + "x" * 68,
    "stratum: a subject\n# a comment line git strips\n\nThe body.\n",
    "Merge branch 'i41-split'",
]
BAD = {
    "Fix the stratum client": "not 'area: what changed'",
    "stratum:no space": "not 'area: what changed'",
    "Stratum: the client": "not 'area: what changed'",
    "tf: " + "x" * 69: "73 characters",
    "stratum: a subject\nthe body without a blank line\n": "no blank line",
    "\n\nbody only\n": "empty subject",
}


def hook(message):
    with tempfile.NamedTemporaryFile("w", suffix=".msg", delete=False) as f:
        f.write(message)
    try:
        done = subprocess.run([HOOK, f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return done.returncode, done.stderr


class CommitMsg(unittest.TestCase):
    def test_good_messages_pass(self):
        for message in GOOD:
            rc, err = hook(message)
            self.assertEqual(rc, 0, f"{message!r}: {err}")

    def test_bad_messages_are_refused_with_the_reason(self):
        for message, reason in BAD.items():
            rc, err = hook(message)
            self.assertEqual(rc, 1, f"{message!r} passed")
            self.assertIn(reason, err, message)


class CheckCommits(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        self.git("init", "-q")
        self.git("config", "user.email", "t@example.org")
        self.git("config", "user.name", "t")

    def git(self, *args):
        return subprocess.run(["git", "-C", self.dir.name, *args], check=True,
                              capture_output=True, text=True).stdout.strip()

    def commit(self, message):
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def check(self, base):
        done = subprocess.run([CHECK, base], cwd=self.dir.name, capture_output=True, text=True)
        return done.returncode, done.stdout

    def test_history(self):
        base = self.commit("Old style subject that predates the rule")
        self.commit("tests: a subject in the form")
        rc, out = self.check(base)
        self.assertEqual(rc, 0, out)
        self.assertIn("1 commits after", out)
        self.commit("Fix everything at once")
        rc, out = self.check(base)
        self.assertEqual(rc, 1, out)
        self.assertIn("1 not in the form", out)

    def test_missing_base_is_skipped(self):
        self.commit("Fix everything at once")
        rc, out = self.check("0" * 40)
        self.assertEqual(rc, 0, out)
        self.assertIn("skipped", out)


if __name__ == "__main__":
    unittest.main()
