import { z } from 'zod';

// Tool arguments shared by several tools.

export const loopIdInput = z
  .uuid()
  .describe('The loop id (a UUID), as submit_loop, wait_for_loop or list_escalations give it');
