-- Each iteration's change from the loop's base, so a person deciding sees it before delivery
-- (store/iteration-diffs.ts, GET /v1/loops/:id/diff).
CREATE TABLE "IterationDiff" (
    "iterationId" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "bytes" INTEGER NOT NULL,
    "truncated" BOOLEAN NOT NULL,

    CONSTRAINT "IterationDiff_pkey" PRIMARY KEY ("iterationId")
);

ALTER TABLE "IterationDiff" ADD CONSTRAINT "IterationDiff_iterationId_fkey" FOREIGN KEY ("iterationId") REFERENCES "Iteration"("id") ON DELETE CASCADE ON UPDATE CASCADE;
