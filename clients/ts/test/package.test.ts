// Tests of what `npm pack` puts in the tarball a user installs.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

// build/test/ holds this file compiled: the package is two folders up.
const pkg = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The paths `npm pack` would put in the tarball (the build is npm test's, done before). */
function packedFiles(): string[] {
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: pkg, encoding: "utf8" });
  const [packed] = JSON.parse(out) as { files: { path: string }[] }[];
  return packed.files.map((f) => f.path);
}

// The Apache-2.0 licence asks that its text go with every copy: the
// package's own LICENSE, the repository's (the Go client module keeps one
// the same way, client/LICENSE).
test("the tarball carries the licence, the repository's LICENSE, and says Apache-2.0", () => {
  const files = packedFiles();
  assert.ok(files.includes("LICENSE"), `npm pack leaves out LICENSE: ${files.join(", ")}`);
  assert.ok(files.includes("dist/index.js"), `npm pack leaves out the build: ${files.join(", ")}`);
  const own = readFileSync(join(pkg, "LICENSE"));
  const repoLicence = join(pkg, "..", "..", "LICENSE");
  if (existsSync(repoLicence)) {
    assert.ok(own.equals(readFileSync(repoLicence)), "clients/ts/LICENSE differs from the repository's LICENSE");
  }
  assert.match(own.toString(), /Apache License\s+Version 2\.0/);
  assert.equal(JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).license, "Apache-2.0");
});
