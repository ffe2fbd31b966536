/** Production entry points run against real PostgreSQL and Temporal: say clearly which setting is missing. */
export function required(value: string | undefined, name: string): string {
  if (!value) {
    console.error(`${name} must be set for this entry point (use \`npm start\` for the embedded defaults)`);
    process.exit(1);
  }
  return value;
}
