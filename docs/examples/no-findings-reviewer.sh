#!/bin/sh
# A stand-in reviewer for trying the loop without a model: it reads the review prompt on stdin and
# answers an empty finding ledger, whatever the change. Never use it for real work: the review is the
# only check that reads the code. Leave `reviewer` out of the request to get the model reviewer.
cat > /dev/null
echo '{"findings": []}'
