"""Tests of what the wheel a user installs holds, read from the installed
distribution's RECORD and METADATA.

    python -m unittest discover -s clients/python/tests   # with the wheel installed
"""

import importlib.metadata
import pathlib
import unittest

REPO_LICENSE = pathlib.Path(__file__).resolve().parents[3] / "LICENSE"


class WheelTest(unittest.TestCase):
    def setUp(self):
        try:
            self.dist = importlib.metadata.distribution("llmrelay")
        except importlib.metadata.PackageNotFoundError:
            self.skipTest("llmrelay is not installed: build the wheel (clients/python/build.sh) and install it")

    def test_wheel_carries_the_licence(self):
        """The Apache-2.0 licence asks that its text go with every copy: the
        wheel's dist-info holds the package's LICENSE, the repository's (as
        the Go module's client/LICENSE and the npm package's are)."""
        licences = [f for f in self.dist.files or () if f.parent.name.endswith(".dist-info") and f.name == "LICENSE"]
        self.assertEqual(len(licences), 1, f"no LICENSE in the wheel's RECORD: {[str(f) for f in self.dist.files or ()]}")
        text = licences[0].read_text()
        self.assertRegex(text, r"Apache License\s+Version 2\.0")
        if REPO_LICENSE.exists():
            self.assertEqual(text, REPO_LICENSE.read_text(), "the wheel's LICENSE differs from the repository's")

    def test_metadata_says_apache_2(self):
        md = self.dist.metadata
        self.assertEqual(md["License"], "Apache-2.0")
        self.assertIn("License :: OSI Approved :: Apache Software License", md.get_all("Classifier") or [])


if __name__ == "__main__":
    unittest.main()
