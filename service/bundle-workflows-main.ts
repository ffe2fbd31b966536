import { writeWorkflowBundle } from './workflow-bundle';

// `npm run build`'s last step: the workflow bundle workers load instead of bundling at every start.
writeWorkflowBundle()
  .then(({ bytes, modules }) =>
    console.log(`workflow bundle: ${(bytes / 2 ** 20).toFixed(1)} MiB, ${modules} project modules`),
  )
  .catch((err: unknown) => {
    console.error('bundling the workflow code failed:', err);
    process.exit(1);
  });
