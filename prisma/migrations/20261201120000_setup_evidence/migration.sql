-- AlterTable: the set-up of a loop's maker workspace runs before any iteration, so its evidence may have none
ALTER TABLE "Evidence" ALTER COLUMN "iterationId" DROP NOT NULL;
