-- When the maker's process started: an attempt its worker never finished is recorded with how long it ran (activities/maker.ts).
ALTER TABLE "Iteration" ADD COLUMN "makerStartedAt" TIMESTAMP(3);
