import fs from 'node:fs';
import path from 'node:path';

// The directory holding package.json + prisma/schema.prisma. Found by walking up from this file so it
// is the same whether the code runs from sources (config/) or compiled (dist/config/).
function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'prisma', 'schema.prisma'))) {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`Cannot find the project root above ${start}`);
  }
}

export const PROJECT_ROOT = findProjectRoot(__dirname);
