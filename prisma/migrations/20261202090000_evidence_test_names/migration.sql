-- AlterTable
ALTER TABLE "Evidence" ADD COLUMN "passedTests" JSONB,
ADD COLUMN "failedTests" JSONB;
