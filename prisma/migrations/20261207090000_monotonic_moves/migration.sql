-- The last move the read model took: the workflow run that made it and its number in that run
-- (store/progress.ts), so a late write of an earlier move, or one after the loop ended, changes nothing.
ALTER TABLE "Loop" ADD COLUMN "moveRunId" TEXT;
ALTER TABLE "Loop" ADD COLUMN "move" INTEGER NOT NULL DEFAULT 0;
