import { randomUUID } from 'node:crypto';
import { loopBranch } from '../../activities/workspace';
import { submissionNotes } from '../../api/submission-notes';
import { loopRequestSchema, type LoopRequestBody } from '../../domain/loop-request';
import { loopRequest } from '../support/loop-request';

// The answer to POST /v1/loops says, when it is so, that delivery will push a branch into a repository on
// the submitter's own disk, and how to turn that off.

const id = randomUUID();
const notesFor = (overrides: Partial<LoopRequestBody>, url = '/tmp/sum-demo') =>
  submissionNotes(id, loopRequestSchema.parse({ ...loopRequest(url, ['sh', 'fix.sh']), ...overrides }));

test('a local repository with the default delivery: the branch the worker pushes, where, and how to turn it off', () => {
  expect(notesFor({})).toEqual([
    `When the loop passes or is approved, delivery pushes the branch ${loopBranch(id)} into the local repository /tmp/sum-demo. ` +
      `To leave it untouched, submit with "delivery": { "push": false }; the change is then at GET /v1/loops/${id}/patch.`,
  ]);
  expect(notesFor({}, 'file:///srv/repos/widgets.git')).toEqual([
    expect.stringContaining('file:///srv/repos/widgets.git'),
  ]);
  // A remote repository pushed to a local mirror: the mirror is what gets the branch.
  expect(notesFor({ delivery: { pushUrl: '/srv/mirror.git' } }, 'https://example.com/acme/widgets.git')).toEqual([
    expect.stringContaining('into the local repository /srv/mirror.git'),
  ]);
});

test('nothing to say when nothing is pushed, or it goes to a remote', () => {
  expect(notesFor({ delivery: { push: false } })).toEqual([]);
  expect(notesFor({}, 'https://example.com/acme/widgets.git')).toEqual([]);
  expect(notesFor({ delivery: { pushUrl: 'git@example.com:acme/widgets.git' } })).toEqual([]);
});
