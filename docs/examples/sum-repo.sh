#!/bin/sh
# Makes the small repository the README's first loop works on: a sum() that subtracts, and a node:test
# test that says it should add. Usage: sh docs/examples/sum-repo.sh /tmp/sum-demo
set -eu
repo="${1:?usage: sum-repo.sh <directory for the new repository>}"
mkdir -p "$repo/test"
cd "$repo"
git init -q -b main
cat > package.json <<'JSON'
{ "name": "sum-demo", "private": true, "scripts": { "test": "node --test" } }
JSON
printf 'module.exports = (a, b) => a - b;\n' > sum.js
cat > test/sum.test.js <<'JS'
const test = require('node:test');
const assert = require('node:assert');
const sum = require('../sum');

test('sum adds two numbers', () => {
  assert.strictEqual(sum(2, 3), 5);
});
JS
git add -A
git -c user.name=example -c user.email=example@example.invalid commit -qm 'sum() and its test'
echo "repository ready: $repo (branch main; npm test fails until sum() adds)"
