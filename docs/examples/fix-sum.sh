#!/bin/sh
# A maker for the README's first loop: any program that edits the working tree will do. The loop runs
# it in the loop's workspace, inside the sandbox, with the prompt on stdin (also in $LOOP_PROMPT_FILE),
# and commits what it leaves behind. This one reads the prompt, ignores it, and writes the fix.
set -eu
title=$(head -n 1)
cat > /dev/null
echo "maker: got \"$title\"; writing sum.js"
printf 'module.exports = (a, b) => a + b;\n' > sum.js
