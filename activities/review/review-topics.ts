import type { ProjectProfile } from '../../domain/gates';
import type { FINDING_TOPICS } from '../../domain/ledger';

type Topic = (typeof FINDING_TOPICS)[number];

// Where defects of each kind of project tend to hide; the reviewer still reports any topic it finds.
const TOPICS_BY_PROFILE: Record<ProjectProfile, Topic[]> = {
  'web-app': ['security', 'correctness', 'error_handling', 'performance'],
  'backend-api': ['security', 'error_handling', 'concurrency', 'correctness'],
  library: ['correctness', 'testing_gaps', 'maintainability', 'error_handling'],
  monorepo: ['correctness', 'maintainability', 'testing_gaps', 'security'],
};

export function reviewTopics(profile: ProjectProfile | null): Topic[] {
  return profile ? TOPICS_BY_PROFILE[profile] : ['correctness', 'error_handling', 'security', 'testing_gaps'];
}
