"""The counting check of the Python tests: each check passes or prints why
it failed, and the run ends with the line ctest reads and its exit status."""
import sys


class Checks:
    def __init__(self):
        self.passed = self.failed = 0

    def __call__(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {what}", file=sys.stderr, flush=True)
        return cond

    def report(self):
        """Prints 'N passed, N failed'; returns the exit status (1 if any failed)."""
        print(f"{self.passed} passed, {self.failed} failed", flush=True)
        return 1 if self.failed else 0
