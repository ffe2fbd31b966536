-- AlterTable
ALTER TABLE "Loop" ADD COLUMN "pushedBranch" TEXT,
ADD COLUMN "pullRequestUrl" TEXT,
ADD COLUMN "deliveryError" TEXT;
