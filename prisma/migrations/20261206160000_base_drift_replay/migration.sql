-- An iteration that is the loop's change replayed onto a base that moved before delivery (activities/prepare-delivery.ts):
-- the base and checkpoint it was replayed from. The loop's context impact, read before delivery, for the API and its filters.
ALTER TABLE "Iteration" ADD COLUMN "replayedFromBase" TEXT;
ALTER TABLE "Iteration" ADD COLUMN "replayedFromCheckpoint" TEXT;
ALTER TABLE "Loop" ADD COLUMN "contextImpact" TEXT;
